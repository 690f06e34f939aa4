"""Helpers for the course notebooks: the Colab setup cell and showing package source.

Every chapter and lab notebook opens with the same setup cell. It installs ``gpuperf`` **only
inside Google Colab** (a local reader already has it from ``requirements.txt``) and once per
runtime (a restarted session keeps what was installed, so running the cell again costs nothing),
and on a page with Triton kernels also the Triton that Colab's CPU runtime lacks
(:mod:`gpuperf.colab`). Which ``gpuperf`` follows from the course's version
(:func:`gpuperf.release.pins`): a release's pages install exactly that release (PyPI, else its
git tag), the tip's pages the tip of ``main``. It never installs, pins or upgrades numpy,
torch, matplotlib or ipywidgets: Colab ships its own, and replacing them breaks the runtime (the
d2l and QuantEcon courses learnt this the hard way). The canonical text of that cell lives here, in
:func:`colab_setup_source`, and ``tests/test_notebooks.py`` checks every notebook against it, with
the repository URL read from the book's ``_config.yml`` and :func:`needs_triton` deciding from
the notebook's own imports whether the page needs Triton. The cell ends by drawing every figure
in the course's style (:func:`gpuperf.figures.use_book_style`: SVG, legible on a phone).

Notebooks never redefine calculators; to show the code behind a number they render the package
source with :func:`show_source`. IPython is imported lazily, so ``import gpuperf`` stays
numpy-only.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ._validate import file_path, flag, sequence, show
from .release import pins

__all__ = [
    "colab_setup_source",
    "glue",
    "needs_triton",
    "repository_url_from_config",
    "show_source",
    "table",
    "toc_files",
]

_URL = re.compile(r"^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._-]+)+$")


def colab_setup_source(
    repository_url: str, *, triton: bool = False, version: str | None = None
) -> str:
    """The exact text of the first code cell of a notebook.

    ``repository_url`` is the book's ``repository.url`` (no trailing slash, no ``.git``), e.g.
    ``https://github.com/gpuperf/gpuperf``. ``triton`` is True for a page that runs Triton
    kernels or compiles them (:func:`needs_triton`): the cell then also installs the Triton that
    Colab's CPU runtime lacks (:func:`gpuperf.colab.install_triton`). Outside Colab the cell
    installs nothing. ``version`` is the course's version the page belongs to (``None``:
    ``gpuperf.__version__``): a release's cell installs exactly that release (from PyPI, else
    from its git tag), a development version's cell the tip of ``main``
    (:func:`gpuperf.release.pins` derives both).
    """
    if not isinstance(repository_url, str):
        raise TypeError(f"repository_url={repository_url!r} must be a string")
    if not isinstance(triton, bool):
        raise TypeError(f"triton={triton!r} must be True or False")
    url = repository_url.strip()
    if url.endswith("/") or url.endswith(".git") or not _URL.match(url):
        raise ValueError(
            f"repository_url={repository_url!r} must look like https://github.com/OWNER/REPO "
            "(no trailing slash, no .git)"
        )
    release = pins(version, url)
    what = "gpuperf, and Triton for the kernels if missing" if triton else "gpuperf"
    if release.is_release:
        what = what.replace("gpuperf", f"gpuperf {release.version}", 1)
    lines = [
        f"# Colab only (≈ 10 s, once per runtime): installs {what}.",
        "# Nothing else: numpy, torch, matplotlib and ipywidgets stay as Colab ships them.",
        "import sys",
        "from importlib.metadata import distributions",
        "",
    ]
    first, *fallbacks = release.setup_installs
    install = [f'%pip install -q "{first}"']
    for requirement in fallbacks:  # a release not on PyPI yet: its git tag
        install += [
            'if not any(distributions(name="gpuperf")):  # not on PyPI yet: the git tag',
            f'    %pip install -q "{requirement}"',
        ]
    if triton:
        lines += [
            'if "google.colab" in sys.modules:',
            '    if not any(distributions(name="gpuperf")):  # a restarted session keeps it',
            *(f"        {line}" for line in install),
            "    from gpuperf.colab import install_triton",
            "",
            "    install_triton()  # the CPU runtime has none; the GPU runtime's is kept",
        ]
    else:
        lines += [
            'if "google.colab" in sys.modules and not any(distributions(name="gpuperf")):',
            *(f"    {line}" for line in install),
        ]
    lines += [
        "",
        "# Figures as SVG with real text, drawn so every word reads on a phone (gpuperf.figures).",
        "from gpuperf.figures import use_book_style",
        "",
        "use_book_style()",
    ]
    return "\n".join(lines)


#: Imports that mean a page runs or compiles Triton kernels.
_TRITON_MODULES = ("triton", "gpuperf.kernels", "gpuperf.inspect")


def needs_triton(sources: Iterable[str]) -> bool:
    """True if any of these code-cell sources imports Triton, ``gpuperf.kernels`` or
    ``gpuperf.inspect`` (IPython magics are translated first, so ``%pip`` lines parse)."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager  # lazily: notebooks only

    transform = TransformerManager().transform_cell
    for source in sequence("sources", sources, _code, minimum=0):
        for node in ast.walk(ast.parse(transform(source))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if any(
                name == module or name.startswith(module + ".")
                for name in names
                for module in _TRITON_MODULES
            ):
                return True
    return False


def _code(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}={show(value)} must be a string of code")
    return value


def _existing_file(name: str, value: object) -> Path:
    path = file_path(name, value)
    if not path.is_file():
        raise FileNotFoundError(f"{name}={value!r}: no such file")
    return path


def repository_url_from_config(config_path: str | Path) -> str:
    """Read ``repository.url`` from a Jupyter Book ``_config.yml`` (needs PyYAML, which JB has)."""
    import yaml  # lazy: only the tests and the book tooling call this

    path = _existing_file("config_path", config_path)
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        return str(config["repository"]["url"])
    except (KeyError, TypeError):
        raise ValueError(f"{config_path} has no repository.url") from None


def toc_files(toc_path: str | Path) -> list[str]:
    """Every document of a Jupyter Book ``_toc.yml``, root first, without extensions."""
    import yaml  # lazy: only the tests and the book tooling call this

    toc = yaml.safe_load(_existing_file("toc_path", toc_path).read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries: Any) -> None:
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def show_source(obj: Any, *, kernel: str | None = None) -> Any:
    """Display the source of a gpuperf function, class or module as highlighted code.

    ``kernel`` shows a Triton kernel instead: the ``@triton.jit`` function ``_<kernel>_kernel``
    of the kernel module ``obj`` is, or defines ``obj`` (``show_source(sin2cos2_fused,
    kernel="sin2cos2")``). Kernels are private by convention — a reader calls the launcher,
    which validates — but their source is the lesson.

    Returns an ``IPython.display.Markdown`` object holding a fenced ``python`` block, so the last
    line of a cell renders it in Jupyter, in the built book and in Colab alike. Markdown, not
    ``IPython.display.Code``: ``Code`` stores Pygments' HTML in the notebook, whose bytes change
    between Pygments releases (2.20 and 2.21 escape quotes differently), so a committed output
    would fail nbval on a fresh machine. The reader's renderer highlights the fenced block.
    """
    try:
        from IPython.display import Markdown
    except ImportError as error:  # pragma: no cover - IPython ships with every notebook kernel
        raise ImportError("show_source needs IPython: pip install ipykernel") from error
    if kernel is not None:
        obj = _kernel(obj, kernel)
    # A @triton.jit kernel is a JITFunction wrapping the Python function in ``.fn``.
    target = getattr(obj, "fn", obj) if callable(getattr(obj, "fn", None)) else obj
    try:
        source = inspect.getsource(target)
    except (TypeError, OSError) as error:
        raise TypeError(
            f"obj={show(obj)}: cannot show its source; pass a function, class or module "
            "defined in a .py file"
        ) from error
    fence = "`" * max(3, _longest_backtick_run(source) + 1)
    return Markdown(f"{fence}python\n{source.rstrip()}\n{fence}")


def _kernel(obj: Any, name: str) -> Any:
    """The ``@triton.jit`` kernel ``_<name>_kernel`` of the kernel module of ``obj``."""
    module = obj if isinstance(obj, ModuleType) else inspect.getmodule(obj)
    if module is None or not module.__name__.startswith("gpuperf.kernels."):
        raise TypeError(
            f"obj={obj!r} must be a module of gpuperf.kernels or a launcher defined in one"
        )
    kernels = sorted(
        key[1 : -len("_kernel")]
        for key, value in vars(module).items()
        if key.startswith("_") and key.endswith("_kernel") and callable(getattr(value, "fn", None))
    )
    if not isinstance(name, str) or name not in kernels:
        raise ValueError(
            f"kernel={name!r} is not a kernel of {module.__name__}; its kernels: "
            f"{', '.join(map(repr, kernels))}"
        )
    return getattr(module, f"_{name}_kernel")


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> Any:
    """A Markdown table as an ``IPython.display.Markdown`` object (renders in Jupyter, Colab and
    the book). Cells are converted with ``str``; format numbers before passing them in.
    """
    from IPython.display import Markdown

    headers = [str(h) for h in sequence("headers", headers)]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for i, row in enumerate(sequence("rows", rows, sequence, minimum=0)):
        cells = [str(c).replace("|", "\\|") for c in row]
        if len(cells) != len(headers):
            raise ValueError(
                f"rows[{i}] has {len(cells)} cells {cells!r} but headers has {len(headers)}"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return Markdown("\n".join(lines))


#: MIME-type prefix myst-nb gives glued outputs that are not displayed in place.
_GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any, *, display: bool = False) -> Any:
    """Glue a computed value into the book's prose: ``{glue:text}`name``` in a Markdown cell.

    Emits the same output as ``myst_nb.glue`` (a display with ``scrapbook`` metadata), without
    importing myst-nb, so the cell also runs in Colab, where myst-nb is not installed. The
    Markdown cell there shows the role's text; the book shows the value, so prose and cell output
    cannot disagree. Returns ``value``, so ``x = glue("x", compute())`` reads naturally.
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
        raise ValueError(
            f"glue name {name!r} must be an identifier-like string (letters, digits, _ -)"
        )
    display = flag("display", display)
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    mimebundle, metadata = format_display_data(value)
    prefix = "" if display else _GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in mimebundle.items()}, raw=True, metadata=metadata)
    return value
