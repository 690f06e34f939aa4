"""The README agrees with the book it describes.

* Its chapter table follows ``_toc.yml``: each chapter's notebook, then its sections, numbered as
  the book numbers them.
* Every Colab, book and repository link follows from the one repository URL in ``_config.yml``
  and the course's version (``gpuperf.release.pins``: ``main`` on the tip, the tag of a
  release): Colab opens ``github/OWNER/REPO/blob/REF/…`` of a notebook that exists, and the book
  is GitHub Pages' ``https://OWNER.github.io/REPO/``.
* It serves its readers in order, on about a page and a half (at most 150 lines): what the
  course is and who it is for, read it online, Colab, run it locally (JupyterLab in the same
  install), the labs (the instructor guide), the book, the tests, contributing. Measured CI
  timings, the replica's details and the GPU check's procedure live in CONTRIBUTING.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from gpuperf.notebook import repository_url_from_config
from gpuperf.release import pins

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPOSITORY = repository_url_from_config(ROOT / "_config.yml")
OWNER, REPO = REPOSITORY.removeprefix("https://github.com/").split("/")
BRANCH = pins(repository_url=REPOSITORY).ref  # _config.yml's branch agrees (test_release.py)


def pages_url() -> str:
    """Where GitHub Pages serves the book of ``OWNER/REPO``."""
    return f"https://{OWNER.lower()}.github.io/{REPO}/"


def readme_urls() -> list[str]:
    return re.findall(r"https?://[^\s)<>\]`'\"]+", README)


def notebook_title(file: str) -> str:
    """The first heading of a notebook (``# 1 · Anatomy of a GPU``), without its ``#``."""
    notebook = json.loads((ROOT / f"{file}.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and source.startswith("# "):
            return source.splitlines()[0].removeprefix("# ").strip()
    raise AssertionError(f"{file}.ipynb has no title")


def test_chapter_table_follows_the_toc():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    rows = {
        line.split("|")[1].strip().split(" ·")[0]: line
        for line in README.splitlines()
        if re.match(r"^\| \d+ · ", line)
    }
    (part,) = [part for part in toc["parts"] if part["caption"] == "Chapters"]
    chapters = part["chapters"]
    assert sorted(rows, key=int) == [str(n) for n in range(1, len(chapters) + 1)]
    for number, chapter in enumerate(chapters, start=1):
        cells = [cell.strip() for cell in rows[str(number)].split("|")[1:-1]]
        assert cells[0] == notebook_title(chapter["file"]), cells
        assert cells[0].startswith(f"{number} · "), cells
        assert cells[1] == f"[{chapter['file']}.ipynb]({chapter['file']}.ipynb)", cells
        sections = [
            f"[{number}.{i}]({section['file']}.ipynb)"
            for i, section in enumerate(chapter.get("sections", []), start=1)
        ]
        assert cells[2] == " · ".join(sections), f"chapter {number}: {cells[2]!r}"
        for file in [chapter["file"], *(s["file"] for s in chapter.get("sections", []))]:
            assert (ROOT / f"{file}.ipynb").is_file(), file


def test_colab_and_book_links_follow_the_repository_url():
    urls = readme_urls()
    colab = [u for u in urls if u.startswith("https://colab.research.google.com/")]
    prefix = f"https://colab.research.google.com/github/{OWNER}/{REPO}/blob/{BRANCH}/"
    assert colab, "the README opens no chapter in Colab"
    for url in colab:
        assert url.startswith(prefix), f"{url} is not a notebook of {REPOSITORY} ({BRANCH})"
        assert (ROOT / url.removeprefix(prefix)).is_file(), f"{url}: no such notebook"
    book = [u for u in urls if ".github.io" in u]
    assert book, "the README does not say where to read the book online"
    assert all(u.startswith(pages_url()) for u in book), (book, pages_url())
    # Links into the course's own GitHub account are links to its repository (other projects,
    # such as Colab's package list, are linked where they are).
    ours = [u for u in urls if u.lower().startswith(f"https://github.com/{OWNER.lower()}/")]
    assert all(u.rstrip("/") == REPOSITORY or u.startswith(f"{REPOSITORY}/") for u in ours), ours


#: The README's sections, in the order its readers need them (issue 36).
SECTIONS = [
    "Read it online",
    "Run a chapter in Colab",
    "Run it locally",
    "Assign the labs",
    "Build the book",
    "Run the tests",
    "Contribute",
]


def test_readme_serves_its_readers_in_order_on_a_page_and_a_half():
    lines = README.splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; keep it to 150"
    headings = [line.removeprefix("## ") for line in lines if line.startswith("## ")]
    assert headings == SECTIONS, headings
    intro = README.split("\n## ", 1)[0]
    assert "who" in intro.lower() or "written for" in intro, "say who the course is for"
    # the procedures and measurements live where their readers look
    for moved in ("gpu-check --budget", "colab_runtimes.json", "587–653 s", "backend-info"):
        assert moved not in README, f"{moved!r} belongs in CONTRIBUTING.md"
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for kept in ("gpu-check --budget", "colab_runtimes.json", "backend-info"):
        assert kept in contributing, f"CONTRIBUTING.md lost {kept!r}"


def test_running_locally_is_one_install_with_jupyterlab():
    section = README.split("## Run it locally", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    install = [c for c in commands if c.startswith("pip install -r ")]
    assert len(install) == 1, commands
    requirements = ROOT / install[0].removeprefix("pip install -r ").split()[0]
    text = requirements.read_text(encoding="utf-8")
    assert "-r requirements.txt" in text.splitlines()
    assert any(line.startswith("jupyterlab") for line in text.splitlines()), text
    assert commands[-1] == "jupyter lab chapters/", commands
