"""`--jobs N`: each worker in its own copy of the tree, importing the copy's modules, modules handed out longest
first, the working tree never touched. The copies and the workers are real (git, subprocesses); the worker is a
stand-in ``mutation/run.py`` in a small repository that records what it saw instead of running cosmic-ray."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mutation import parallel
from mutation import run as mutation_run

STAND_IN = Path(__file__).with_name("stand_in_run.py")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "qbank").mkdir(parents=True)
    (root / "src" / "qbank" / "__init__.py").write_text("")
    (root / "src" / "qbank" / "m.py").write_text("MUTATED = False\n")
    (root / "mutation").mkdir()
    (root / "mutation" / "__init__.py").write_text("")
    (root / "mutation" / "run.py").write_text(STAND_IN.read_text())
    (root / ".gitignore").write_text("ignored/\n.venv/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "cache").write_text("a developer's cache\n")
    (root / "tool.sh").write_text("#!/bin/sh\n")
    (root / "tool.sh").chmod(0o755)
    (root / "gone.txt").write_text("deleted after commit\n")
    (root / "link").symlink_to("tool.sh")
    (root / ".venv").mkdir()
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    (root / "gone.txt").unlink()
    (root / "new_test.py").write_text("# untracked, not ignored: a test written for this run\n")
    return root


def test_the_tree_is_what_git_sees_tracked_and_untracked_but_not_ignored_or_deleted(repo: Path) -> None:
    files = parallel.tree_files(repo)
    assert files == sorted(
        [
            ".gitignore",
            "link",
            "mutation/__init__.py",
            "mutation/run.py",
            "new_test.py",
            "src/qbank/__init__.py",
            "src/qbank/m.py",
            "tool.sh",
        ]
    )


def test_a_copy_keeps_modes_and_links_and_links_the_tools(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    parallel.copy_tree(repo, copy)
    assert (copy / "src" / "qbank" / "m.py").read_text() == "MUTATED = False\n"
    assert stat.S_IMODE((copy / "tool.sh").stat().st_mode) == 0o755
    assert (copy / "link").is_symlink() and os.readlink(copy / "link") == "tool.sh"
    assert (copy / ".venv").is_symlink() and (copy / ".venv").resolve() == (repo / ".venv").resolve()
    assert not (copy / "ignored").exists() and not (copy / "gone.txt").exists()
    assert not (copy / ".vendor").exists()  # linked only where the tree has one


def test_a_copy_of_a_tree_named_relatively_links_the_tools_of_that_tree(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    parallel.copy_tree(Path("."), tmp_path / "copy")
    assert (tmp_path / "copy" / ".venv").resolve() == (repo / ".venv").resolve()


def test_a_worker_imports_the_copys_modules_not_the_installed_ones(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    parallel.copy_tree(repo, copy)
    assert parallel.imports_from(copy) == (copy / "src" / "qbank" / "__init__.py").resolve()
    # without the worker's environment the editable install wins: the override is what makes the copy count
    plain = subprocess.run(
        [sys.executable, "-c", "import qbank; print(qbank.__file__)"],
        cwd=copy,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(plain.stdout.strip()).resolve() != (copy / "src" / "qbank" / "__init__.py").resolve()


def test_modules_go_out_longest_first_and_a_module_never_run_before_them(tmp_path: Path) -> None:
    for name, seconds in (("short", 10.0), ("long", 900.0), ("middle", 100.0)):
        (tmp_path / f"{name}.seconds.json").write_text(json.dumps({"seconds": seconds}))
    assert parallel.order(["short", "new", "long", "middle", "newer"], tmp_path) == [
        "new",
        "newer",
        "long",
        "middle",
        "short",
    ]


def test_workers_run_side_by_side_each_in_its_copy_and_leave_the_tree_as_it_was(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    outcomes = parallel.run_all(repo, ["a", "b", "c", "broken"], out, 2, ["--resume"])
    assert [(o.name, o.returncode) for o in outcomes] == [("a", 0), ("b", 0), ("c", 0), ("broken", 3)]
    seen = {n: json.loads((out / f"{n}.seen.json").read_text()) for n in ("a", "b", "c", "broken")}
    trees = {s["cwd"] for s in seen.values()}
    assert len(trees) == 2 and all(not Path(t).is_relative_to(repo) for t in trees)
    for s in seen.values():
        assert Path(s["qbank"]).resolve() == (Path(s["cwd"]) / "src" / "qbank" / "__init__.py").resolve()
        assert s["argv"][:1] == ["--worker"] and "--resume" in s["argv"]
    assert seen["a"]["met"] and seen["b"]["met"]  # a and b (the first two) ran at once, each seeing the other
    assert (repo / "src" / "qbank" / "m.py").read_text() == "MUTATED = False\n"  # mutated only in the copies
    assert all(not Path(t).exists() for t in trees)  # the copies are removed
    assert all(Path(t).is_relative_to(out / "trees") for t in trees)  # under the run's folder, not /tmp


def test_a_relative_out_is_the_callers_folder_not_the_workers(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    outcomes = parallel.run_all(repo, ["c"], Path("rel"), 2)
    assert [(o.name, o.returncode) for o in outcomes] == [("c", 0)]
    assert (tmp_path / "rel" / "c.seen.json").exists()


def test_a_copy_that_imports_qbank_from_elsewhere_runs_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "imports_from", lambda tree: repo / "src" / "qbank" / "__init__.py")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(parallel.WorkerSetupError, match=r"imports qbank from .*, not from its copy"):
        parallel.run_all(repo, ["a", "b"], out, 2)
    assert not list(out.glob("*.started"))


def test_a_stopped_run_ends_the_tests_in_their_own_session_and_removes_the_copies(repo: Path, tmp_path: Path) -> None:
    """SIGTERM to the run (``timeout``, a cancelled job): the worker, and what it started in a session of its
    own (as cosmic-ray starts each mutant's tests), are ended before the copies go."""
    out = tmp_path / "out"
    out.mkdir()
    code = (
        "from pathlib import Path; from mutation import parallel; "
        f"parallel.run_all(Path({str(repo)!r}), ['sleeper'], Path({str(out)!r}), 1)"
    )
    run = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2])
    pid_file = out / "sleeper.pid"
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    assert _alive(grandchild)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=30) != 0
    for _ in range(100):
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild)
    assert list((out / "trees").iterdir()) == []  # the copy is gone


def _alive(pid: int) -> bool:
    """Running (a zombie, ended and not yet reaped by whoever adopted it, is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("args", [["--jobs", "0"], ["--jobs", "2", "--retest"], ["--jobs", "2", "--report-only"]])
def test_jobs_takes_a_number_from_one_and_goes_with_a_full_run(args: list[str], tmp_path: Path) -> None:
    assert mutation_run.main([*args, "--out", str(tmp_path)]) == 2


def test_a_whole_run_with_jobs_records_the_commit_it_started_on_and_a_part_run_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heads = iter(["c0ffee1", "later"])  # a commit made while the run goes is not what it tested
    monkeypatch.setattr(mutation_run, "head_commit", lambda: next(heads))
    monkeypatch.setattr(mutation_run, "uncommitted", lambda paths: "")  # whatever the real tree holds now
    monkeypatch.setattr(mutation_run, "read_session", lambda *a: [])
    handed: list[tuple[list[str], int, list[str]]] = []

    def run_all(root: Path, names: list[str], out: Path, jobs: int, extra: list[str]) -> list[parallel.Outcome]:
        handed.append((list(names), jobs, list(extra)))
        for n in names:
            (out / f"{n}.sqlite").write_bytes(b"")  # each worker's session
        return [parallel.Outcome(n, 0, 1.0) for n in names]

    monkeypatch.setattr(mutation_run, "run_all", run_all)
    every = [m["name"] for m in mutation_run.load()["module"]]
    assert mutation_run.main(["--jobs", "2", "--resume", "--out", str(tmp_path)]) == 0
    assert handed == [(every, 2, ["--resume"])]
    record = json.loads((tmp_path / "run.json").read_text())
    assert (record["commit"], record["jobs"], record["modules"]) == ("c0ffee1", 2, every)
    assert record["resumed"] is True
    shown = f"on commit c0ffee1, {len(every)} module(s), 2 job(s) side by side"
    assert shown in (tmp_path / "report.md").read_text()
    assert "s wall (resumed: this part only)." in (tmp_path / "report.md").read_text()
    # a run of some modules is not a whole run: the whole run's record stays
    heads = iter(["d00d002"])
    assert mutation_run.main(["--jobs", "2", "--only", "pagepool-content", "--out", str(tmp_path)]) == 0
    assert handed[-1] == (["pagepool-content"], 2, [])
    assert json.loads((tmp_path / "run.json").read_text()) == record
    assert shown in (tmp_path / "report.md").read_text()


def test_a_worker_that_did_not_finish_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    handed: list[list[str]] = []

    def run_all(root: Path, names: list[str], out: Path, jobs: int, extra: list[str]) -> list[parallel.Outcome]:
        handed.append(list(names))
        (out / f"{names[0]}.sqlite").write_bytes(b"")  # the one that finished has its session
        return [parallel.Outcome(names[0], 0, 1.0), parallel.Outcome(names[1], 1, 1.0)]

    monkeypatch.setattr(mutation_run, "run_all", run_all)
    monkeypatch.setattr(mutation_run, "uncommitted", lambda paths: "")
    monkeypatch.setattr(mutation_run, "read_session", lambda *a: [])
    args = ["--jobs", "2", "--only", "pagepool-content", "seal-nesting", "--out", str(tmp_path)]
    assert mutation_run.main(args) == 2
    assert handed == [["seal-nesting", "pagepool-content"]]
    assert not (tmp_path / "run.json").exists()
    assert "src/qbank/seal/nesting.py" in (tmp_path / "report.md").read_text()  # what finished is reported


@pytest.mark.parametrize("why", ["setup", "no-session"])
def test_a_run_whose_worker_could_not_start_or_left_no_session_fails(
    why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_all(root: Path, names: list[str], out: Path, jobs: int, extra: list[str]) -> list[parallel.Outcome]:
        if why == "setup":
            raise parallel.WorkerSetupError("a worker in w0 imports qbank from elsewhere")
        return [parallel.Outcome(n, 0, 1.0) for n in names]  # exit 0, yet no session written

    monkeypatch.setattr(mutation_run, "run_all", run_all)
    monkeypatch.setattr(mutation_run, "uncommitted", lambda paths: "")
    assert mutation_run.main(["--jobs", "2", "--only", "pagepool-content", "--out", str(tmp_path)]) == 2
    assert not (tmp_path / "run.json").exists()
