"""`--jobs N`: each worker in its own copy of the tree, importing the copy's modules, modules handed out longest
first, the working tree never touched. The copies and the workers are real (git, subprocesses); the worker is a
stand-in ``mutation/run.py`` in a small repository that records what it saw instead of running cosmic-ray."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mutation import parallel
from mutation import run as mutation_run

STAND_IN = """\
import json, os, sys, time
from pathlib import Path
argv = sys.argv[1:]
out, name = Path(argv[argv.index("--out") + 1]), argv[argv.index("--only") + 1]
import qbank
module = Path("src/qbank/m.py")
start = time.time()
module.write_text("MUTATED = True\\n")  # what cosmic-ray does to the module, in place
time.sleep(0.6)
(out / f"{name}.seen.json").write_text(json.dumps({
    "cwd": os.getcwd(), "qbank": qbank.__file__, "argv": argv, "start": start, "end": time.time(),
}))
sys.exit(3 if name == "broken" else 0)
"""


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
    (root / "mutation" / "run.py").write_text(STAND_IN)
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
    runs = sorted((s["start"], s["end"]) for s in seen.values())
    assert runs[1][0] < runs[0][1]  # the first two overlapped: two workers at once
    assert (repo / "src" / "qbank" / "m.py").read_text() == "MUTATED = False\n"  # mutated only in the copies
    assert all(not Path(t).exists() for t in trees)  # the copies are removed


@pytest.mark.parametrize("args", [["--jobs", "0"], ["--jobs", "2", "--retest"], ["--jobs", "2", "--report-only"]])
def test_jobs_takes_a_number_from_one_and_goes_with_a_full_run(args: list[str], tmp_path: Path) -> None:
    assert mutation_run.main([*args, "--out", str(tmp_path)]) == 2


def test_a_full_run_with_jobs_records_the_commit_it_started_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    heads = iter(["c0ffee1", "later"])  # a commit made while the run goes is not what it tested
    monkeypatch.setattr(mutation_run, "head_commit", lambda: next(heads))
    handed: list[tuple[list[str], int, list[str]]] = []

    def run_all(root: Path, names: list[str], out: Path, jobs: int, extra: list[str]) -> list[parallel.Outcome]:
        handed.append((list(names), jobs, list(extra)))
        return [parallel.Outcome(n, 0, 1.0) for n in names]

    monkeypatch.setattr(mutation_run, "run_all", run_all)
    assert mutation_run.main(["--jobs", "2", "--resume", "--only", "pagepool-content", "--out", str(tmp_path)]) == 0
    assert handed == [(["pagepool-content"], 2, ["--resume"])]
    record = json.loads((tmp_path / "run.json").read_text())
    assert (record["commit"], record["jobs"], record["modules"]) == ("c0ffee1", 2, ["pagepool-content"])
    assert "on commit c0ffee1, 1 module(s), 2 job(s) side by side" in (tmp_path / "report.md").read_text()


def test_a_worker_that_did_not_finish_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run_all(root: Path, names: list[str], out: Path, jobs: int, extra: list[str]) -> list[parallel.Outcome]:
        return [parallel.Outcome(names[0], 0, 1.0), parallel.Outcome(names[1], 1, 1.0)]

    monkeypatch.setattr(mutation_run, "run_all", run_all)
    args = ["--jobs", "2", "--only", "pagepool-content", "seal-nesting", "--out", str(tmp_path)]
    assert mutation_run.main(args) == 2
    assert not (tmp_path / "run.json").exists()
