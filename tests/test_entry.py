"""The console script's fast path: a warm no-op ``qbank verify`` answered before the CLI loads, and only then."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qbank import cli, entry
from qbank.verify import store
from qbank.verify.engine import VerifyConfig, verify

from .conftest import CASES, REPO

LIB_SCRIPT = """# %%
import kvmath
from qbank.verify import claim

claim("per_token", kvmath.per_token({layers}, 8, 128, 2), unit="B")
"""
LIB = "def per_token(layers, kv_heads, head_dim, nbytes):\n    return 2 * layers * kv_heads * head_dim * nbytes\n"
QUESTION = (CASES / "base" / "questions" / "base-question.yaml").read_text(encoding="utf-8")


def age(root: Path) -> None:
    """Every file ten minutes old, as after a checkout (outside the racy-hash window)."""
    old = os.stat(root).st_mtime - 600
    for path in root.rglob("*"):
        if ".qbank" not in path.parts:
            os.utime(path, (old, old))


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base corpus plus two scripts sharing a ``verify/_lib`` module, every result cached (run once)."""
    root = tmp_path_factory.mktemp("filled") / "repo"
    shutil.copytree(CASES / "base", root, ignore=shutil.ignore_patterns(".qbank", "__pycache__"))
    (root / "verify" / "_lib").mkdir(exist_ok=True)
    shutil.copy(REPO / "verify" / "_lib" / "facts.yaml", root / "verify" / "_lib" / "facts.yaml")
    (root / "verify" / "_lib" / "kvmath.py").write_text(LIB)
    for slug, layers in (("uses-lib-a", 80), ("uses-lib-b", 32)):
        (root / "verify" / f"{slug}.py").write_text(LIB_SCRIPT.format(layers=layers))
        (root / "questions" / f"{slug}.yaml").write_text(QUESTION)
    age(root)
    assert verify(root, VerifyConfig(jobs=2)).ran == 3
    return root


@pytest.fixture
def warm(filled: Path, tmp_path: Path) -> Path:
    """A copy of the filled repository (mtimes kept), for a test to edit."""
    root = tmp_path / "repo"
    shutil.copytree(filled, root)
    return root


def full_cli(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = cli.main(["verify", "--root", str(root), *extra])
    return code, capsys.readouterr().out


def fast(root: Path) -> str | None:
    return entry.no_op_report(str(root), "auto", {})


def edit_index(root: Path, change: Any) -> None:
    path = root / store.INDEX
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_warm_repository_is_answered_exactly_as_the_cli_answers(warm: Path, capsys: Any) -> None:
    out = fast(warm)
    assert out == "3 scripts: 0 ran, 3 cached (3 pass)\n0 errors, 0 warnings in 3 files\n"
    assert full_cli(warm, capsys) == (0, out)
    assert entry.main(["verify", "--root", str(warm)]) == 0
    assert capsys.readouterr().out == out


def test_the_console_script_runs_the_cli_when_the_fast_path_cannot_answer(
    warm: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(list(argv)) or 7)
    assert entry.main(["verify", "--root", str(warm)]) == 0 and calls == []
    (warm / "verify" / "uses-lib-a.py").write_text(LIB_SCRIPT.format(layers=81))
    assert entry.main(["verify", "--root", str(warm)]) == 7
    for argv in (["verify", "--force"], ["verify", "--trust-local"], ["verify", "--shard", "1/2"], ["check"]):
        assert entry.main([*argv, "--root", str(warm)]) == 7
    assert calls[0] == ["verify", "--root", str(warm)] and len(calls) == 5


def test_an_edited_script_is_stale_through_the_fast_path(warm: Path, capsys: Any) -> None:
    path = warm / "verify" / "uses-lib-a.py"
    path.write_text(LIB_SCRIPT.format(layers=81))
    assert fast(warm) is None
    code, out = full_cli(warm, capsys)
    assert code == 0 and "1 ran, 2 cached" in out


def test_an_edited_dependency_is_stale_through_the_fast_path(warm: Path) -> None:
    (warm / "verify" / "_lib" / "kvmath.py").write_text(LIB + "\nVERSION = 2\n")
    assert fast(warm) is None


def test_a_shared_module_hashed_differently_in_two_rows_is_stale(warm: Path) -> None:
    """Only one of two scripts re-ran after their shared module changed: the other's row keeps the old hash,
    which the engine sees (the file's hash is taken once) and so must the fast path, whatever the order."""
    lib = warm / "verify" / "_lib" / "kvmath.py"
    old = lib.stat().st_mtime - 300
    lib.write_text(LIB + "\nVERSION = 2\n")
    os.utime(lib, (old, old))  # every other file keeps the stat its rows recorded
    assert verify(warm, VerifyConfig(slugs=["uses-lib-a"])).ran == 1
    verify(warm, VerifyConfig(slugs=["uses-lib-a"]))  # settles the racy window of the new hash
    assert fast(warm) is None
    run = verify(warm, VerifyConfig())
    assert [r["slug"] for r in run.results if r["cache"] == "miss"] == ["uses-lib-b"]
    verify(warm, VerifyConfig())
    assert fast(warm) is not None


def test_a_touched_file_goes_to_the_engine_which_rehashes_it_once(warm: Path) -> None:
    path = warm / "verify" / "uses-lib-b.py"
    old = path.stat().st_mtime - 300
    os.utime(path, (old, old))  # content unchanged: the engine re-hashes it and rewrites the index
    assert fast(warm) is None
    assert verify(warm, VerifyConfig()).ran == 0
    assert fast(warm) is not None


def test_a_hash_taken_within_the_racy_window_is_not_trusted(warm: Path) -> None:
    edit_index(warm, lambda d: [s.__setitem__(3, s[1] + 1) for row in d["rows"].values() for s in row[1].values()])
    assert fast(warm) is None


def test_a_new_or_deleted_script_goes_to_the_engine(warm: Path) -> None:
    (warm / "verify" / "uses-lib-c.py").write_text(LIB_SCRIPT.format(layers=8))
    assert fast(warm) is None
    (warm / "verify" / "uses-lib-c.py").unlink()
    (warm / "verify" / "uses-lib-b.py").unlink()
    assert fast(warm) is None


def test_a_missing_or_corrupt_index_falls_back(warm: Path, capsys: Any) -> None:
    index = warm / store.INDEX
    good, good_out = index.read_text(), fast(warm)
    for text in ("", "{not json", json.dumps({"version": 3, "envs": [], "rows": {}}), "[]"):
        index.write_text(text)
        assert fast(warm) is None
    index.write_text(good)
    edit_index(warm, lambda d: d["rows"].__setitem__("uses-lib-a", [0, {"verify/uses-lib-a.py": 5}, {}, None]))
    assert fast(warm) is None
    index.unlink()
    assert fast(warm) is None
    assert full_cli(warm, capsys) == (0, good_out)  # the entries are the truth: the engine rebuilds the index
    assert fast(warm) == good_out


def test_results_made_without_the_sandbox_never_take_the_fast_path(warm: Path) -> None:
    edit_index(warm, lambda d: [env.__setitem__(3, "trust-local") for env in d["envs"]])
    assert fast(warm) is None


def test_a_result_with_problems_or_a_timeout_goes_to_the_cli(warm: Path) -> None:
    warning = {"path": "verify/uses-lib-a.py", "line": 0, "col": 0, "level": "warning", "code": "x", "message": "m"}
    edit_index(warm, lambda d: d["rows"]["uses-lib-a"][2].__setitem__("problems", [warning]))
    assert fast(warm) is None


def test_another_runtime_or_device_goes_to_the_engine(warm: Path) -> None:
    edit_index(warm, lambda d: [env.__setitem__(1, "0.0 triton 0.0") for env in d["envs"]])
    assert fast(warm) is None


def test_a_fake_gpu_changes_the_environment(warm: Path) -> None:
    assert entry.no_op_report(str(warm), "auto", {"QBANK_FAKE_CUDA": "H100"}) is None  # device cuda: no rows


def test_no_questions_folder_goes_to_the_cli(tmp_path: Path) -> None:
    assert entry.no_op_report(str(tmp_path), "auto", {}) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["verify"],
        ["verify", "--root", "r"],
        ["verify", "--root=r", "--strict", "-v"],
        ["verify", "--format", "github", "--jobs", "2", "--device", "cpu"],
        ["verify", "-j", "1", "--verbose", "--format=text", "--device=auto"],
    ],
)
def test_plain_verify_command_lines_may_take_the_fast_path(argv: list[str]) -> None:
    assert entry.warm_request(argv, {}) is not None


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["check"],
        ["verify", "some-slug"],
        ["verify", "--force"],
        ["verify", "--trust-local"],
        ["verify", "--shard", "1/2"],
        ["verify", "--shard=1/2", "--plan", "p.json"],
        ["verify", "--merge", "a.json"],
        ["verify", "--write-plan", "p.json"],
        ["verify", "--report-json", "r.json"],
        ["verify", "--report-md", "r.md"],
        ["verify", "--format", "json"],
        ["verify", "--device", "tpu"],
        ["verify", "--device", "bogus", "--device", "cpu"],  # argparse refuses the first occurrence
        ["verify", "--jobs", "two"],
        ["verify", "-j=2"],
        ["verify", "-j2"],
        ["verify", "--ro", "r"],  # an abbreviation argparse would expand
        ["verify", "--root"],
        ["verify", "--root", "-x"],
        ["verify", "--mem-limit", "2"],
        ["verify", "--network", "socket"],
        ["verify", "-h"],
        ["verify", "--", "x"],
    ],
)
def test_every_other_command_line_goes_to_the_cli(argv: list[str]) -> None:
    assert entry.warm_request(argv, {}) is None


def test_a_github_step_summary_goes_to_the_cli() -> None:
    assert entry.warm_request(["verify"], {"GITHUB_STEP_SUMMARY": "/tmp/summary.md"}) is None
    assert entry.warm_request(["verify"], {"GITHUB_ACTIONS": "true"}) == (".", "auto")


def test_the_fast_path_imports_neither_the_cli_nor_the_engine(warm: Path) -> None:
    """What made a warm run cost four hashing loops: argparse and every subcommand, pathlib, dataclasses, the
    engine; and never mkdocs, torch, Triton or pydantic."""
    code = (
        "import sys\nfrom qbank.entry import main\n"
        f"assert main(['verify', '--root', {str(warm)!r}]) == 0\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(proc.stdout.split("\n")[-2].split())
    assert "qbank.entry" in loaded and "qbank.verify.warm" in loaded
    heavy = {"argparse", "pathlib", "dataclasses", "typing", "qbank.cli", "qbank.problems", "qbank.verify.engine",
             "qbank.verify.cache", "qbank.verify.store", "mkdocs", "torch", "triton", "pydantic", "hashlib"}
    assert loaded & heavy == set()
