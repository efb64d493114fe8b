"""`make mutation JOBS=N`: modules mutated side by side, each worker in its own copy of the tree.

A module is mutated in place, and the tests of one module import the others' files, so two modules cannot be
mutated in one tree at once. Each worker gets a copy of the working tree (the files ``git ls-files -co
--exclude-standard`` names: tracked, and untracked but not ignored; the ignored tools the tests use, ``.venv``,
``.vendor`` and ``node_modules``, are linked, never written) in a folder under ``OUT/trees/``, and runs
``python -m mutation.run --worker --only NAME --out OUT`` there, one module at a time. ``PYTHONPATH`` names the
copy's ``src`` first, so its tests, and the scripts its sandbox runs, import the copy's (mutated) modules rather
than those the editable install points at; each copy checks that before its first module. Modules go out
longest first (the seconds their last session recorded; a module never run goes first).

The working tree is never mutated. cosmic-ray starts each mutant's tests in a session of their own, so a
stopped run (Ctrl-C, SIGTERM, SIGHUP) ends every process that carries its copy's mark in its environment
(``QBANK_MUTATION_TREE``), whatever its session, before the copies are removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from mutation.report import recorded_seconds

LINKED = (".venv", ".vendor", "node_modules")
MARK = "QBANK_MUTATION_TREE"


class WorkerSetupError(Exception):
    """A worker's copy could not be made or imports the wrong modules: no module was run in it."""


@dataclass(frozen=True)
class Outcome:
    """One module's worker run: its exit status (0 when it finished: the sessions say what survived; anything
    else: the run itself failed) and seconds."""

    name: str
    returncode: int
    seconds: float


def tree_files(root: Path) -> list[str]:
    """The working tree's files as git sees them: tracked, and untracked but not ignored (deleted ones left out)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=root, capture_output=True, check=True
    ).stdout
    return sorted({p for p in out.decode().split("\0") if p and os.path.lexists(root / p)})


def copy_tree(root: Path, dest: Path) -> None:
    """Copy the working tree's files into ``dest`` (modes and symbolic links kept) and link the ignored tools."""
    root = root.resolve()  # the links to the tools name it: a relative root would make them point at themselves
    for rel in tree_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target, follow_symlinks=False)
    for name in LINKED:
        if (root / name).exists():
            (dest / name).symlink_to(root / name)


def order(names: Sequence[str], out: Path) -> list[str]:
    """Longest first by the seconds each module's last session recorded; a module never run goes first."""

    def seconds(name: str) -> float:
        took = recorded_seconds(out, name)
        return float("inf") if took is None else took

    return sorted(names, key=lambda n: (-seconds(n), list(names).index(n)))


def worker_env(tree: Path) -> dict[str, str]:
    """The environment of a worker in ``tree``: the copy's ``src`` first on the path, and the copy's mark."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env[MARK] = str(tree)
    return env


def imports_from(tree: Path) -> Path:
    """Where ``qbank`` comes from for a worker in ``tree`` (it must be the copy's ``src``)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import qbank; print(qbank.__file__)"],
        cwd=tree,
        env=worker_env(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        raise WorkerSetupError(f"a worker in {tree} cannot import qbank: {probe.stderr.strip()}")
    return Path(probe.stdout.strip()).resolve()


def marked(base: Path) -> list[int]:
    """The processes whose environment carries the mark of a copy under ``base`` (any session, any depth)."""
    prefix = f"{MARK}={base}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if any(var.startswith(prefix) for var in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def end_marked(base: Path, rounds: int = 50) -> None:
    """SIGKILL every process marked for ``base`` until none is left (a dying parent may still fork once)."""
    for _ in range(rounds):
        pids = marked(base)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the run as Ctrl-C does, so its cleanup runs (``timeout``, a cancelled CI job)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    before = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def run_all(root: Path, names: Sequence[str], out: Path, jobs: int, extra: Sequence[str] = ()) -> list[Outcome]:
    """Run every named module in ``jobs`` copies of the tree; each worker writes to ``out`` what a single run
    would. ``extra``: arguments for each worker (``--resume``, ``--skip-missing-tests``). Raises WorkerSetupError
    when a copy cannot be used (the other workers stop taking modules)."""
    out = out.resolve()  # the workers run elsewhere: a relative folder would be theirs, and removed with them
    queue = order(names, out)
    lock = threading.Lock()
    outcomes: list[Outcome] = []
    failures: list[BaseException] = []
    stopping = threading.Event()
    (out / "trees").mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="run-", dir=out / "trees"))

    def work(k: int) -> None:
        tree = base / f"w{k}"
        try:
            copy_tree(root, tree)
            found = imports_from(tree)
            if not found.is_relative_to((tree / "src").resolve()):
                raise WorkerSetupError(f"a worker in {tree} imports qbank from {found}, not from its copy")
            while True:
                with lock:
                    if not queue or failures or stopping.is_set():
                        return
                    name = queue.pop(0)
                start = time.monotonic()
                argv = [sys.executable, "-m", "mutation.run", "--worker", "--out", str(out), *extra, "--only", name]
                proc = subprocess.Popen(argv, cwd=tree, env=worker_env(tree), start_new_session=True)
                proc.wait()
                with lock:
                    outcomes.append(Outcome(name, proc.returncode, time.monotonic() - start))
        except BaseException as exc:  # reported by run_all; the other workers stop taking modules
            with lock:
                failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(max(1, min(jobs, len(queue))))]
    try:
        with _stop_on_signals():
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
    finally:
        stopping.set()
        end_marked(base)  # on an interrupt: the workers, cosmic-ray, each mutant's tests and what they started
        for t in threads:
            t.join(10)
        end_marked(base)
        shutil.rmtree(base, ignore_errors=True)
    if failures:
        first = failures[0]
        raise first if isinstance(first, WorkerSetupError) else WorkerSetupError(f"a worker failed: {first!r}")
    return sorted(outcomes, key=lambda o: list(names).index(o.name))
