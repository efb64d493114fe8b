"""`make mutation JOBS=N`: modules mutated side by side, each worker in its own copy of the tree.

A module is mutated in place, and the tests of one module import the others' files, so two modules cannot be
mutated in one tree at once. Each worker gets a copy of the working tree (the files ``git ls-files -co
--exclude-standard`` names: tracked, and untracked but not ignored; the ignored tools the tests use, ``.venv``,
``.vendor`` and ``node_modules``, are linked, never written) in a temporary folder outside the repository, and
runs ``python -m mutation.run --worker --only NAME --out OUT`` there, one module at a time. ``PYTHONPATH``
names the copy's ``src`` first, so its tests, and the scripts its sandbox runs, import the copy's (mutated)
modules rather than those the editable install points at; each copy checks that before its first module.
Modules go out longest first (the seconds their last session recorded; a module never run goes first).
The working tree is never mutated, so a run stopped at any point leaves it as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

LINKED = (".venv", ".vendor", "node_modules")


@dataclass(frozen=True)
class Outcome:
    """One module's worker run: its exit status (0 all killed or equivalent, 1 a survivor, 2 or other: the run
    itself failed) and seconds."""

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
        recorded = out / f"{name}.seconds.json"
        if not recorded.exists():
            return float("inf")
        return float(json.loads(recorded.read_text())["seconds"])

    return sorted(names, key=lambda n: (-seconds(n), list(names).index(n)))


def worker_env(tree: Path) -> dict[str, str]:
    """The environment of a worker in ``tree``: the copy's ``src`` first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def imports_from(tree: Path) -> Path:
    """Where ``qbank`` comes from for a worker in ``tree`` (it must be the copy's ``src``)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import qbank; print(qbank.__file__)"],
        cwd=tree,
        env=worker_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(probe.stdout.strip()).resolve()


def run_all(root: Path, names: Sequence[str], out: Path, jobs: int, extra: Sequence[str] = ()) -> list[Outcome]:
    """Run every named module in ``jobs`` copies of the tree; each worker's output goes to ``out`` as a single
    run's would. ``extra``: arguments for each worker (``--resume``, ``--skip-missing-tests``)."""
    queue = order(names, out)
    lock = threading.Lock()
    outcomes: list[Outcome] = []
    live: set[subprocess.Popen[bytes]] = set()
    failures: list[BaseException] = []
    base = Path(tempfile.mkdtemp(prefix="qbank-mutation-"))

    def work(k: int) -> None:
        tree = base / f"w{k}"
        try:
            copy_tree(root, tree)
            found = imports_from(tree)
            if not found.is_relative_to((tree / "src").resolve()):
                raise RuntimeError(f"a worker in {tree} imports qbank from {found}, not from its copy")
            while True:
                with lock:
                    if not queue or failures:
                        return
                    name = queue.pop(0)
                start = time.monotonic()
                argv = [sys.executable, "-m", "mutation.run", "--worker", "--out", str(out), *extra, "--only", name]
                proc = subprocess.Popen(argv, cwd=tree, env=worker_env(tree), start_new_session=True)
                with lock:
                    live.add(proc)
                proc.wait()
                with lock:
                    live.discard(proc)
                    outcomes.append(Outcome(name, proc.returncode, time.monotonic() - start))
        except BaseException as exc:  # reported by run_all; the other workers stop taking modules
            with lock:
                failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(max(1, min(jobs, len(queue))))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    finally:
        with lock:
            queue.clear()
            for proc in live:  # an interrupt: each worker's whole process group (pytest, sandboxed scripts)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for t in threads:
            t.join(10)
        shutil.rmtree(base, ignore_errors=True)
    if failures:
        raise SystemExit(f"mutation: a worker failed: {failures[0]}")
    return sorted(outcomes, key=lambda o: list(names).index(o.name))
