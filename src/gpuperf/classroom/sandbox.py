"""One sandbox per submission: what the student's code can see, reach and spend.

Each submission's notebook runs in a process tree of its own, started by
:func:`runner_process`, under one of two mechanisms chosen at run time by :func:`mechanism`:

``bwrap`` (bubblewrap, the sandbox Flatpak uses; ``apt-get install bubblewrap``)
    New user, PID, network, IPC, UTS and cgroup namespaces: no network at all, no view of other
    processes (``/proc/<ppid>/cwd`` leads nowhere), running as ``nobody`` with no capabilities
    and no way to create further namespaces.
    The file system is built from scratch: the system's ``/usr`` and a few files of ``/etc``,
    the Python installation and its ``site-packages``, and the ``gpuperf`` package folder the
    grader itself imports, all read-only; an empty home folder (also the working directory) and
    ``/tmp``, each a tmpfs of at most ``Limits.disk_mb`` MiB, are the only writable places, so
    nothing a notebook writes lands on the grader's disk and nothing is left to clean up (a
    tmpfs ends with its sandbox). The list is the same wherever the command is started: the
    working directory is never mounted. The instructor's lab folders, the hidden tests, other
    students' submissions and results are not mounted, so they do not exist inside. Killing the
    sandbox's first process tears the whole namespace down. Python is started from the folder
    its executable really lives in (a virtual environment reached through a link to a folder,
    a pyenv shim and conda all work), under the name it was started by, so a virtual
    environment is still one inside.

``fallback`` (no working bwrap)
    A separate session and process group, the same resource limits, a private scratch
    directory on the grader's disk (given by the class command, which removes it without
    following links: :mod:`.trees`) as working directory, a *copy* of the gpuperf package first
    on ``PYTHONPATH`` (so appending to its source changes only this submission's copy) and a
    minimal environment, as the grading user. It does **not** isolate the network,
    the file system (anything the grading user can read, the student's code can read, including
    the hidden tests; anything it can write, it can overwrite) or other processes (a student's
    process can signal or trace the grader's when they run as the same user, and a process that
    calls ``setsid`` survives the kill). The trusted tests never run in the sandbox in either
    mode, so what the fallback fails to hide cannot change a grade computed afterwards by
    :mod:`gpuperf.classroom.tester`; it can leak hidden tests and disturb concurrent runs.

In both modes each process inside has rlimits set before the sandbox starts (``RLIMIT_AS`` for
memory, ``RLIMIT_CPU`` for CPU time, ``RLIMIT_FSIZE`` for files, no core dumps) and runs at a
lower priority than the grader; where the class command could make one, the sandbox joins the
submission's cgroup (:mod:`.box`) before anything runs, which limits all its processes together:
memory (tmpfs included), their number and their CPU share. The wall-clock limit is enforced from
outside by the grader, which kills the whole sandbox with SIGKILL.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from .._validate import choice, file_path, instance, optional, positive_int
from .box import Box
from .trees import remove_tree

#: Where the scratch directory appears inside the bwrap sandbox.
SANDBOX_HOME = "/home/student"
#: Files and folders of /etc the notebook needs (dynamic linker, fonts, time zone).
ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/fonts",
    "/etc/localtime",
    "/etc/mime.types",
)
NOBODY = 65534
#: How much lower a sandbox's CPU priority is than the grader's (``nice``).
NICE = 5


@dataclass(frozen=True)
class Limits:
    """Per-process limits of one sandbox: memory (MiB of address space), CPU seconds, MiB per
    file written, and the size of each of its tmpfs folders (home and ``/tmp``, bwrap only)."""

    memory_mb: int = 4096
    cpu_s: int = 600
    file_mb: int = 1024
    disk_mb: int = 512

    def __post_init__(self) -> None:
        for name, low, high in (("memory_mb", 16, 2**30), ("cpu_s", 1, 10**7),
                                ("file_mb", 1, 2**30), ("disk_mb", 1, 2**30)):  # fmt: skip
            object.__setattr__(self, name, positive_int(name, getattr(self, name), low, high))

    def apply(self) -> None:
        """Set the rlimits and priority in this process (called between fork and exec)."""
        memory = self.memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_s, self.cpu_s + 5))
        size = self.file_mb * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))


@functools.cache
def mechanism() -> str:
    """``"bwrap"`` if bubblewrap starts this Python here (tried once), else ``"fallback"``
    (:func:`why_fallback` says why).

    ``GPUPERF_SANDBOX=fallback`` forces the fallback (the tests use it to check both).
    """
    return "fallback" if why_fallback() else "bwrap"


@functools.cache
def why_fallback() -> str:
    """Why the fallback sandbox is used ('' when bubblewrap works)."""
    if os.environ.get("GPUPERF_SANDBOX", "") == "fallback":
        return "GPUPERF_SANDBOX=fallback"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    probe = [*_bwrap_args(Limits()), str(interpreter()), "-I", "-S", "-c", "pass"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap did not start: {error}"
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"bubblewrap could not start Python here: {text or done.returncode}"
    return ""


def interpreter() -> Path:
    """The Python to start in a sandbox: this one, from the folder its executable really lives
    in, under the name it was started by. ``.venv/bin/python`` reached through a link to a
    folder becomes ``/real/venv/bin/python`` (mounted, unlike the link), still a link to the
    base interpreter, so Python still finds the environment's ``pyvenv.cfg`` beside it."""
    executable = Path(sys.executable)
    return Path(os.path.realpath(executable.parent)) / executable.name


def package_root() -> Path:
    """The folder that holds the ``gpuperf`` package this process imported (for an editable
    install, the checkout's ``src/``): the sandbox imports the very same code."""
    import gpuperf

    return Path(gpuperf.__file__).resolve().parent.parent


def _python_roots() -> list[Path]:
    """Folders the interpreter and its installed packages live in, plus the gpuperf package
    folder itself: mounted read-only in the sandbox.

    Built from the interpreter's own configuration (``sys.prefix``, ``sysconfig``'s library
    folders, ``site``'s package folders), never from ``sys.path``, whose first entry is the
    working directory the command was started from: what the sandbox sees must not depend on
    where the instructor stands (a course folder holding ``submissions/`` must not appear).
    """
    import site

    candidates = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent,
                  interpreter().parent}  # fmt: skip
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        candidates.add(Path(sysconfig.get_paths()[key]))
    candidates.update(Path(p) for p in site.getsitepackages())
    candidates.add(package_root() / "gpuperf")
    # never mount a repository root (it holds the labs and their hidden tests), nor /
    roots = sorted(
        p.resolve()
        for p in candidates
        if p.exists()
        and p.resolve() != Path("/")
        and not (p / ".git").exists()
        and not (p / "labs").exists()
    )
    kept: list[Path] = []  # outermost folders only
    for path in roots:
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return kept


def _bwrap_args(limits: Limits) -> list[str]:
    args = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
    ]
    args += ["--disable-userns", "--die-with-parent", "--new-session", "--clearenv"]
    size = str(limits.disk_mb * 2**20)
    args += ["--ro-bind", "/usr", "/usr", "--dev", "/dev", "--proc", "/proc"]
    args += ["--size", size, "--tmpfs", "/tmp"]
    for name in ("bin", "lib", "lib64", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for path in ETC:
        if Path(path).exists():
            args += ["--ro-bind", path, path]
    for root in _python_roots():
        if not root.is_relative_to("/usr"):
            args += ["--ro-bind", str(root), str(root)]
    args += ["--size", size, "--tmpfs", SANDBOX_HOME, "--chdir", SANDBOX_HOME]
    return args


def _environment(home: str, python_path: Path) -> dict[str, str]:
    return {
        "HOME": home,
        "PYTHONPATH": str(python_path),
        "PATH": f"{interpreter().parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.config/matplotlib",
        "TRITON_CACHE_DIR": f"{home}/.triton",
        "CUDA_VISIBLE_DEVICES": "",
        "OMP_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }


def runner_process(
    scratch: Path | None, limits: Limits, kind: str | None = None, box: Box | None = None
) -> subprocess.Popen:
    """Start :mod:`gpuperf.classroom.runner` for one submission in a sandbox of ``kind``, in
    ``box`` (a :class:`~gpuperf.classroom.box.Box`, or ``None``: per-process limits only).

    ``scratch`` is the fallback's private, empty folder (its home; the caller removes it);
    bwrap needs none (``None``): its home is a tmpfs. The returned process talks the runner's
    protocol on its stdin and stdout; everything the notebook prints (and the sandbox's own
    error messages) comes out of its stderr, a pipe: the trusted side reads the notebook's output
    from there, never from a file the notebook could replace with a link. Killing its process
    group (see :func:`kill`) ends the sandbox.
    """
    scratch = optional("scratch", scratch, file_path)
    limits = instance("limits", limits, Limits)
    box = optional("box", box, instance, Box)
    kind = choice("kind", kind, ("bwrap", "fallback")) if kind is not None else mechanism()
    runner = ["-m", "gpuperf.classroom.runner"]
    if kind == "bwrap":
        env = _environment(SANDBOX_HOME, package_root())
        command = _bwrap_args(limits)
        for key, value in env.items():
            command += ["--setenv", key, value]
        command += [str(interpreter()), "-s", *runner]
        env_outside: dict[str, str] = {}
        where = "/"
    else:
        if scratch is None:
            raise ValueError("scratch=None: the fallback sandbox needs a private folder as home")
        scratch.mkdir(parents=True, exist_ok=True)
        package = scratch.parent / f"{scratch.name}-gpuperf"
        if not package.exists():  # copied whole or not at all (a full disk stops a copy)
            partial = scratch.parent / f".{scratch.name}-gpuperf.partial"
            try:
                remove_tree(partial)
                shutil.copytree(package_root() / "gpuperf", partial / "gpuperf")
                partial.rename(package)
            except OSError:
                remove_tree(partial)
                raise
        env_outside = _environment(str(scratch), package)
        command = [sys.executable, "-s", *runner]
        where = str(scratch)

    def prepare() -> None:  # between fork and exec: the box first, so its limits hold at once
        if box is not None:
            box.join()
        limits.apply()

    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=where,
        env=env_outside,
        preexec_fn=prepare,
        start_new_session=True,
    )


def kill(process: subprocess.Popen) -> None:
    """SIGKILL the sandbox's whole process group and reap it (idempotent)."""
    import signal

    instance("process", process, subprocess.Popen)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for stream in (process.stdin, process.stdout):  # stderr belongs to its reader
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


__all__ = [
    "Limits",
    "interpreter",
    "kill",
    "mechanism",
    "package_root",
    "runner_process",
    "why_fallback",
]
