"""Each submission's share of the machine: a cgroup with memory, process and CPU limits.

Resource limits of a single process (``RLIMIT_AS`` and friends) do not make a share: three
forked children each get the whole address-space limit, a tmpfs holds memory that is no
process's, and nothing limits how many processes a notebook starts or how many cores it keeps
busy. So the kernel's cgroups do it, where the grader may create them: one group per
submission (its *box*), which every sandbox started for that submission joins before it runs
anything, with

* ``memory``: everything its processes use, their tmpfs files (``/tmp`` and home in the bwrap
  sandbox) included, and no swap; over it, the kernel's OOM killer picks a process *of this box*,
  never a classmate's grader;
* ``pids``: how many processes and threads it may have at once;
* ``cpu``: at most ``cpus`` cores' worth of time (a quota), and the box's own CPU time, which
  the grader uses as the canary's clock (a starved sandbox is not a slow one).

The groups go under the grader's own cgroup (so a limit set on the grader, by systemd or a
container, still holds for everything below) or, failing that, at the top of the hierarchy:

* cgroup v2 (one hierarchy, ``/sys/fs/cgroup``): the memory, pids and cpu controllers must be
  enabled for the groups; that needs root, or a *delegated* cgroup (``systemd-run --user
  --scope -p Delegate=yes ...``), whose processes the grader moves into a leaf of its own first
  (cgroup v2 lets only a group without processes share out controllers);
* cgroup v1 (one hierarchy per controller, ``/sys/fs/cgroup/memory`` ...): root, or folders of
  the grader's own groups made writable for its user.

Where neither works, :func:`hierarchy` says why, and each sandbox has only its per-process
limits (see the instructor guide). ``GPUPERF_CGROUP=off`` skips cgroups on purpose.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .._validate import mapping, name_string, positive_float, positive_int, sequence, show

#: Controllers a box needs (v2 names); ``cpu`` is used where present.
NEEDED = ("memory", "pids")
#: The CPU quota's period in microseconds (the kernel's default).
CPU_PERIOD_US = 100_000


@dataclass(frozen=True)
class Hierarchy:
    """Where this grader's boxes go: cgroup ``version`` (1 or 2) and, per controller, the folder
    under which a class's group is created (v2: one folder for all)."""

    version: int
    parents: tuple[tuple[str, str], ...]  # (controller, folder), cpu and cpuacct where present

    def __post_init__(self) -> None:
        object.__setattr__(self, "version", positive_int("version", self.version, 1, 2))
        pairs = sequence("parents", self.parents, _pair)
        if not {"memory", "pids"} <= {c for c, _ in pairs}:
            raise ValueError(f"parents={show(self.parents)} must name the memory and pids groups")
        object.__setattr__(self, "parents", pairs)

    def folders(self) -> list[Path]:
        """The distinct parent folders (v1 mounts some controllers together)."""
        return sorted({Path(folder) for _, folder in self.parents})

    def describe(self) -> str:
        names = ", ".join(sorted({c for c, _ in self.parents} - {"cpuacct"}))
        return f"cgroup v{self.version} ({names})"


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the hierarchy, fs type, options) of every cgroup mount."""
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
                continue
            point = fields[4].replace("\\040", " ")
            found.append((point, fields[3], tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    own = {}
    with open("/proc/self/cgroup") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _inside(point: str, root: str, path: str) -> Path:
    relative = os.path.relpath(path, root) if path.startswith(root) else "."
    return Path(point) / ("" if relative == "." else relative)


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _v1(mounts: list, own: dict[str, str]) -> Hierarchy | str:
    parents = []
    for controller in (*NEEDED, "cpu", "cpuacct"):
        mount = next((m for m in mounts if m[2] == "cgroup" and controller in m[3]), None)
        if mount is None:
            if controller in NEEDED:
                return f"no cgroup v1 {controller} controller is mounted"
            continue
        point, root = mount[0], mount[1]
        candidates = [_inside(point, root, own.get(controller, "/")), Path(point)]
        folder = next((c for c in candidates if c.is_dir() and _writable(c)), None)
        if folder is None:
            if controller in NEEDED:
                return (
                    f"the cgroup v1 {controller} groups are not writable by this user "
                    f"({candidates[0]}): run as root, or make the grader's group writable"
                )
            continue
        parents.append((controller, str(folder)))
    cpu = {c for c, _ in parents}
    if "cpu" in cpu and "cpuacct" not in cpu:  # the clock is cpuacct's in v1
        parents = [p for p in parents if p[0] != "cpu"]
    return Hierarchy(1, tuple(parents))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _v2(point: str, root: str, own: str) -> Hierarchy | str:
    wanted = {*NEEDED, "cpu"}
    mine = _inside(point, root, own)
    top = Path(point)
    available = set(_read(mine / "cgroup.controllers").split())
    if not set(NEEDED) <= available:
        return (
            f"the cgroup v2 controllers {', '.join(sorted(set(NEEDED) - available))} are not "
            f"available to this process's group ({mine})"
        )
    for folder in dict.fromkeys([mine, top]):
        if not _writable(folder):
            continue
        enabled = set(_read(folder / "cgroup.subtree_control").split())
        if set(NEEDED) <= enabled:
            return Hierarchy(2, tuple((c, str(folder)) for c in sorted(wanted & enabled)))
        if folder == mine and _leave_for_leaf(mine, wanted & available):
            enabled = set(_read(mine / "cgroup.subtree_control").split())
            return Hierarchy(2, tuple((c, str(mine)) for c in sorted(wanted & enabled)))
    return (
        f"cannot create cgroup v2 groups with the memory and pids controllers under {mine}: "
        "run as root, or in a delegated cgroup (systemd-run --user --scope -p Delegate=yes ...)"
    )


def _leave_for_leaf(mine: Path, controllers: set[str]) -> bool:
    """In a delegated v2 group: move this process into a leaf of it, then share out the
    controllers (allowed only once the group holds no process). Undone if others remain."""
    leaf = mine / f"gpuperf-grader-{os.getpid()}"
    try:
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
        (mine / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in controllers))
        return True
    except OSError:
        with contextlib.suppress(OSError):
            (mine / "cgroup.procs").write_text(str(os.getpid()))
        with contextlib.suppress(OSError):
            leaf.rmdir()
        return False


@functools.cache
def hierarchy() -> Hierarchy | str:
    """Where this process can create boxes, or why it cannot (a sentence). Tried once."""
    if os.environ.get("GPUPERF_CGROUP", "").lower() in ("off", "0", "no", "none"):
        return "cgroups are switched off (GPUPERF_CGROUP=off)"
    try:
        mounts, own = _mounts(), _own_groups()
    except OSError as error:
        return f"the cgroups of this process cannot be read ({error.strerror})"
    unified = next((m for m in mounts if m[2] == "cgroup2"), None)
    why = "no cgroup file system is mounted"
    if unified is not None:
        found = _v2(unified[0], unified[1], own.get("", "/"))
        if isinstance(found, Hierarchy):
            return found
        why = found
    if any(m[2] == "cgroup" for m in mounts):
        found = _v1(mounts, own)
        if isinstance(found, Hierarchy):
            return found
        why = found if unified is None or "not available" in why else f"{why}; {found}"
    return why


@dataclass(frozen=True)
class Share:
    """One box's limits: MiB of memory (tmpfs files included), processes and threads at once,
    and cores' worth of CPU time."""

    memory_mb: int = 4096
    processes: int = 256
    cpus: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "memory_mb", positive_int("memory_mb", self.memory_mb, 16, 2**30))
        object.__setattr__(self, "processes", positive_int("processes", self.processes, 1, 2**22))
        cpus = positive_float("cpus", self.cpus)
        if not 0.01 <= cpus <= 4096:
            raise ValueError(f"cpus={show(self.cpus)} must be between 0.01 and 4096 cores")
        object.__setattr__(self, "cpus", cpus)

    def describe(self) -> str:
        return f"{self.memory_mb} MiB, {self.processes} processes, {self.cpus:g} CPU"


class Box:
    """One submission's cgroup (one folder per v1 hierarchy): created with its limits, joined
    by every sandbox of the submission, read for CPU time and OOM kills, emptied and removed.

    Made by the class command (:meth:`create`), which removes it after the submission's
    grading process ends, killed or not; that process gets :meth:`spec` and :meth:`attach`\\ es
    to it, so the sandboxes it starts join the box (:meth:`join`, between fork and exec)."""

    def __init__(self, folders: dict[str, str], version: int) -> None:
        self.folders = mapping("folders", folders, _folder)
        if not {"memory", "pids"} <= set(self.folders):
            raise ValueError(f"folders={show(folders)} must name the memory and pids groups")
        self.version = positive_int("version", version, 1, 2)
        # cgroup.procs files as bytes, opened between fork and exec (nothing else may run there)
        self._procs = [os.fsencode(os.path.join(f, "cgroup.procs")) for f in self.paths()]

    # ------------------------------------------------------------------------- making one

    @classmethod
    def create(cls, where: Hierarchy, name: str, share: Share) -> Box:
        """A new box called ``name`` in the class group of ``where`` with ``share`` set."""
        if not isinstance(where, Hierarchy):
            raise TypeError(f"where={show(where)} must be a Hierarchy (see hierarchy())")
        name_string("name", name)
        if "/" in name or name.startswith("."):
            raise ValueError(f"name={show(name)} must be a plain folder name")
        if not isinstance(share, Share):
            raise TypeError(f"share={show(share)} must be a Share")
        folders: dict[str, str] = {}
        try:
            for controller, parent in where.parents:
                folder = _class_group(Path(parent), where.version) / name
                if str(folder) not in folders.values():
                    folder.mkdir()  # a name taken (a control file, another box) is an error
                folders[controller] = str(folder)
            box = cls(folders, where.version)
            box._limit(share)
        except OSError:
            for folder in set(folders.values()):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            raise
        return box

    def _limit(self, share: Share) -> None:
        memory = str(share.memory_mb * 2**20)
        quota = str(max(1000, round(share.cpus * CPU_PERIOD_US)))
        if self.version == 2:
            folder = Path(self.folders["memory"])
            (folder / "memory.max").write_text(memory)
            with contextlib.suppress(OSError):  # no swap configured: no file
                (folder / "memory.swap.max").write_text("0")
            (folder / "pids.max").write_text(str(share.processes))
            if "cpu" in self.folders:
                (folder / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            return
        memory_folder = Path(self.folders["memory"])
        (memory_folder / "memory.limit_in_bytes").write_text(memory)
        with contextlib.suppress(OSError):  # swap accounting off: no memsw files
            (memory_folder / "memory.memsw.limit_in_bytes").write_text(memory)
        (Path(self.folders["pids"]) / "pids.max").write_text(str(share.processes))
        if "cpu" in self.folders:
            cpu = Path(self.folders["cpu"])
            (cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (cpu / "cpu.cfs_quota_us").write_text(quota)

    def spec(self) -> str:
        """The box as one line of JSON, for the grading process's command line."""
        return json.dumps({"version": self.version, "folders": self.folders})

    @classmethod
    def attach(cls, spec: str) -> Box:
        """The box :meth:`spec` describes (made by another process)."""
        if not isinstance(spec, str):
            raise TypeError(f"spec={show(spec)} must be a box's spec (a JSON string)")
        try:
            data = json.loads(spec)
            return cls(data["folders"], data["version"])
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"spec={show(spec)} is not a box's spec ({error})") from None

    # ------------------------------------------------------------------------- using one

    def paths(self) -> list[str]:
        return sorted(set(self.folders.values()))

    def join(self) -> None:
        """Move the calling process into the box (every hierarchy). Safe between fork and exec:
        plain system calls only."""
        for path in self._procs:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def cpu_seconds(self) -> float:
        """CPU time used by every process that was ever in the box (0.0 if unknown)."""
        if self.version == 2:
            for line in _read(Path(self.folders["memory"]) / "cpu.stat").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
            return 0.0
        folder = self.folders.get("cpuacct") or self.folders.get("cpu")
        text = _read(Path(folder) / "cpuacct.usage").strip() if folder else ""
        return int(text) / 1e9 if text.isdigit() else 0.0

    def memory_peak_mb(self) -> float | None:
        """The most memory the box has held at once, tmpfs files included (None if unknown)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        text = _read(Path(self.folders["memory"]) / name).strip()
        return int(text) / 2**20 if text.isdigit() else None

    def oom_kills(self) -> int:
        """How many processes of the box the kernel killed for want of memory so far."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for line in _read(Path(self.folders["memory"]) / name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def pids(self) -> list[int]:
        found = set()
        for folder in self.paths():
            for word in _read(Path(folder) / "cgroup.procs").split():
                if word.isdigit():
                    found.add(int(word))
        return sorted(found)

    def kill(self, wait_s: float = 5.0) -> bool:
        """SIGKILL every process in the box until none is left (True) or ``wait_s`` passes."""
        wait_s = positive_float("wait_s", wait_s, allow_zero=True)
        end = time.monotonic() + wait_s
        kill_file = Path(self.folders["memory"]) / "cgroup.kill"
        while True:
            pids = self.pids()
            if not pids:
                return True
            if self.version == 2 and kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > end:
                return False
            time.sleep(0.02)

    def remove(self, wait_s: float = 5.0) -> bool:
        """Kill what is left and remove the box's folders (True if all are gone)."""
        self.kill(wait_s)
        end = time.monotonic() + wait_s
        left = list(self.paths())
        while left:
            for folder in list(left):
                try:
                    os.rmdir(folder)
                    left.remove(folder)
                except FileNotFoundError:
                    left.remove(folder)
                except OSError as error:
                    if error.errno != errno.EBUSY or time.monotonic() > end:
                        return False
            if left:
                time.sleep(0.05)
        return True


def _pair(name: str, value: object) -> tuple[str, str]:
    if not isinstance(value, tuple | list) or len(value) != 2 or not isinstance(value[0], str):
        raise TypeError(f"{name}={show(value)} must be a (controller, folder) pair")
    return value[0], _folder(name, value[1])


def _folder(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.startswith("/"):
        raise ValueError(f"{name}={show(value)} must be the absolute path of a cgroup folder")
    return value


def _class_group(parent: Path, version: int) -> Path:
    """This grader's group under ``parent``: made once, its controllers shared out (v2)."""
    group = parent / f"gpuperf-grade-{os.getpid()}"
    if not group.is_dir():
        _remove_stale(parent)
        group.mkdir(exist_ok=True)
        if version == 2:
            wanted = set(_read(group / "cgroup.controllers").split()) & {*NEEDED, "cpu"}
            (group / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
    return group


def _remove_stale(parent: Path) -> None:
    """Remove the empty groups of graders that were killed before they could (best effort)."""
    for group in parent.glob("gpuperf-grade-*"):
        pid = group.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        for folder in [*group.glob("*/"), group]:
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def remove_class_groups(where: Hierarchy) -> None:
    """Remove this grader's (empty) class groups, after its last box."""
    if not isinstance(where, Hierarchy):
        raise TypeError(f"where={show(where)} must be a Hierarchy (see hierarchy())")
    for folder in where.folders():
        with contextlib.suppress(OSError):
            os.rmdir(folder / f"gpuperf-grade-{os.getpid()}")


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of process ``pid`` and all its descendants now alive (the canary's clock where
    there is no box), from ``/proc``; 0.0 where it cannot be read."""
    pid = positive_int("pid", pid, maximum=2**22)
    parents: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        stat_line = _read(Path(entry.path) / "stat")
        fields = stat_line.rpartition(")")[2].split()
        if len(fields) < 15:
            continue
        child = int(entry.name)
        parents.setdefault(int(fields[1]), []).append(child)
        times[child] = sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        total += times.get(current, 0.0)
        pending += parents.get(current, [])
    return total


__all__ = [
    "Box",
    "Hierarchy",
    "Share",
    "hierarchy",
    "remove_class_groups",
    "tree_cpu_seconds",
]
