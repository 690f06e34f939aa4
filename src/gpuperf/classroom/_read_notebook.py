"""Read one submitted notebook in a process of its own, under a memory and CPU cap.

``python -I -S _read_notebook.py PATH MAX_FILE_BYTES MAX_CELL_BYTES MAX_CODE_BYTES MEMORY_MB``
prints one JSON object: ``{"ok": true, "assignment": ..., "code": [...]}`` (the otter assignment
name, if any, and the code cells' sources) or ``{"ok": false, "reason": ...}``. It imports
nothing but the standard library and sets its own limits first, so a notebook whose JSON
expands a thousandfold in memory (20 MB of ``{}`` in its metadata is millions of dicts) ends
this process, not the grader's: :func:`gpuperf.classroom.submissions.read_submission` starts it
and turns a death into a reason.
"""

import json
import os
import resource
import stat
import sys


def _type_name(value):
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def read(path, max_file, max_cell, max_code):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        why = "it is a symbolic link" if os.path.islink(path) else error.strerror
        return {"ok": False, "reason": f"notebook unreadable: {why}"}
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return {"ok": False, "reason": "notebook unreadable: not a regular file"}
        if info.st_size > max_file:
            return {
                "ok": False,
                "reason": f"notebook too large: {info.st_size / 1e6:.1f} MB, over the "
                f"{max_file / 1e6:.0f} MB a notebook may have",
            }
        data = handle.read(max_file + 1)
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, nested too deeply
        text = f"{type(error).__name__}: {str(error)[:200]}"
        return {"ok": False, "reason": f"notebook unreadable: {text}"}
    del data
    if not isinstance(notebook, dict):
        return {"ok": False, "reason": "notebook unreadable: not a notebook (a JSON object)"}
    version = notebook.get("nbformat")
    cells, metadata = notebook.get("cells"), notebook.get("metadata")
    if version != 4 or not isinstance(cells, list) or not isinstance(metadata, dict):
        return {
            "ok": False,
            "reason": "notebook unreadable: not a Jupyter notebook of format 4 (with cells "
            f"and metadata; its nbformat is {str(version)[:20]!r})",
        }
    code, total = [], 0
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            return {
                "ok": False,
                "reason": f"notebook damaged: cell {index} is not a notebook cell",
            }
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            return {
                "ok": False,
                "reason": f"notebook damaged: the source of cell {index} is "
                f"{_type_name(source)}, not text (was the file edited by hand?)",
            }
        if cell["cell_type"] != "code":
            continue
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > max_cell:
            return {
                "ok": False,
                "reason": f"notebook damaged: code cell {index} holds {size / 1e6:.1f} MB of "
                f"source, over the {max_cell / 1e6:.0f} MB a cell may have (something pasted "
                "by mistake?)",
            }
        total += size
        if total > max_code:
            return {
                "ok": False,
                "reason": f"notebook damaged: its code cells hold more than {max_code / 1e6:.0f} "
                "MB of source in all",
            }
        code.append(source)
    otter = metadata.get("otter")
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    assignment = None if name is None else name if isinstance(name, str) else repr(name)
    return {
        "ok": True,
        "assignment": None if assignment is None else assignment[:200],
        "code": code,
    }


def main():
    path = os.fsencode(sys.argv[1])
    max_file, max_cell, max_code, memory_mb = (int(a) for a in sys.argv[2:6])
    memory = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 61))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.setrecursionlimit(2000)
    try:
        answer = read(path, max_file, max_cell, max_code)
    except MemoryError:
        return 3
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
