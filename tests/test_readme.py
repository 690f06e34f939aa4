"""The README agrees with the book it describes.

* Its chapter table follows ``_toc.yml``: each chapter's notebook, then its sections, numbered as
  the book numbers them.
* Every Colab, book and repository link follows from the one repository URL in ``_config.yml``
  (``repository.url`` and ``repository.branch``): Colab opens ``github/OWNER/REPO/blob/BRANCH/…``
  of a notebook that exists, and the book is GitHub Pages' ``https://OWNER.github.io/REPO/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from gpuperf.notebook import repository_url_from_config

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPOSITORY = repository_url_from_config(ROOT / "_config.yml")
OWNER, REPO = REPOSITORY.removeprefix("https://github.com/").split("/")
BRANCH = CONFIG["repository"].get("branch", "main")


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
