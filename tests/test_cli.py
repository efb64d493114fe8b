"""The CLI as authors meet it: exit codes, output formats, positions, no tracebacks unless -v."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qbank.cli import main

from .conftest import CASE_IGNORE, REPO


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None) if env is None or "GITHUB_ACTIONS" not in env else None
    return subprocess.run(
        [sys.executable, "-m", "qbank.cli", *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
    )


def break_two_files(root: Path) -> None:
    q = root / "questions" / "base-question.yaml"
    text = q.read_text().replace("editorial_rank: 990", "editorial_rank: ten")
    q.write_text(text.replace("topic: kv-cache", "topic: kv-cahce"))
    a = root / "answers" / "base-question.md"
    a.write_text(a.read_text().replace("///\n", "", 1).rstrip("/\n") + "\n")


def test_clean_repo_exits_zero(tiny_repo: Path) -> None:
    res = run("check", cwd=tiny_repo)
    assert res.returncode == 0, res.stderr
    assert "0 errors, 0 warnings in 6 files" in res.stdout


def test_broken_files_exit_one_with_positions(tiny_repo: Path) -> None:
    break_two_files(tiny_repo)
    res = run("check", cwd=tiny_repo)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert "questions/base-question.yaml:9:17: error: editorial_rank: Input should be a valid integer" in res.stderr
    assert any(
        ln.startswith("answers/base-question.md:3:1: error:") and ln.endswith("[premium-unclosed]") for ln in lines
    )
    # the bad rank does not hide the misspelt topic in the same file
    assert "questions/base-question.yaml:6:8: error: unknown topic 'kv-cahce' (did you mean 'kv-cache'?)" in res.stderr
    assert lines[-1] == "3 errors, 0 warnings in 6 files"
    assert "Traceback" not in res.stderr


def test_json_format(tiny_repo: Path) -> None:
    break_two_files(tiny_repo)
    res = run("check", "--format", "json", cwd=tiny_repo)
    assert res.returncode == 1
    payload = json.loads(res.stdout)
    assert payload["errors"] == 3
    assert {p["code"] for p in payload["problems"]} == {"field-type", "premium-unclosed", "unknown-topic"}
    assert all({"path", "line", "col", "level", "code", "message"} <= p.keys() for p in payload["problems"])


def test_github_format_is_default_in_actions(tiny_repo: Path) -> None:
    break_two_files(tiny_repo)
    res = run("check", cwd=tiny_repo, env={"GITHUB_ACTIONS": "true"})
    assert res.returncode == 1
    assert "::error file=questions/base-question.yaml,line=9,col=17,title=field-type::" in res.stderr


def test_check_named_file_reports_only_that_question(tiny_repo: Path) -> None:
    break_two_files(tiny_repo)
    for folder, suffix in (("questions", ".yaml"), ("answers", ".md"), ("verify", ".py")):
        src = tiny_repo / folder / f"base-question{suffix}"
        (tiny_repo / folder / f"other{suffix}").write_text(src.read_text())
    res = run("check", "answers/other.md", cwd=tiny_repo)
    assert res.returncode == 1
    assert "questions/other.yaml:9:17: error" in res.stderr and "answers/other.md:3:1: error" in res.stderr
    assert "base-question" not in res.stderr


def test_usage_errors_exit_two(tiny_repo: Path, tmp_path: Path) -> None:
    assert run("frobnicate", cwd=tiny_repo).returncode == 2
    assert run("check", "--format", "xml", cwd=tiny_repo).returncode == 2
    res = run("check", cwd=tmp_path)
    assert res.returncode == 2 and "no questions/ folder" in res.stderr


def test_internal_error_exit_three_traceback_only_with_v(
    tiny_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import qbank.pipeline

    def boom(root: Path, **kw: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(qbank.pipeline, "check_all", boom)
    assert main(["check", "--root", str(tiny_repo)]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: disk on fire" in err and "Traceback" not in err
    assert main(["check", "--root", str(tiny_repo), "-v"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_strict_fails_on_warnings(tiny_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import qbank.pipeline
    from qbank.problems import Report, warning

    real = qbank.pipeline.check_all

    def with_warning(root: Path, **kw: bool) -> tuple[object, Report]:
        corpus, report = real(root, **kw)
        report.extend([warning("answers/base-question.md", 1, 1, "demo-warning", "a warning")])
        return corpus, report

    monkeypatch.setattr(qbank.pipeline, "check_all", with_warning)
    assert main(["check", "--root", str(tiny_repo)]) == 0
    assert main(["check", "--root", str(tiny_repo), "--strict"]) == 1


def test_repository_content_checks_clean(tmp_path: Path) -> None:
    # a copy without the developer's .qbank cache: what a clean clone checks, so no stale record can pass it
    for part in ("questions", "answers", "verify"):
        shutil.copytree(REPO / part, tmp_path / part, ignore=CASE_IGNORE)
    shutil.copy(REPO / "mkdocs.yml", tmp_path)
    # a hang guard, not a speed target: this verifies every script of the repository cold (bench/ measures speed)
    res = run("check", cwd=tmp_path, timeout=1800)
    assert res.returncode == 0, res.stderr


def test_schemas_in_repo_are_current(tmp_path: Path) -> None:
    res = run("schema", "--root", str(tmp_path), "--out", "schemas", cwd=REPO)
    assert res.returncode == 0
    for path in (tmp_path / "schemas").iterdir():
        committed = REPO / "schemas" / path.name
        assert committed.exists(), f"run `qbank schema`: {path.name} is missing"
        assert json.loads(committed.read_text()) == json.loads(path.read_text()), f"run `qbank schema`: {path.name}"


def test_repository_yaml_files_point_editors_at_schemas() -> None:
    files = [*(REPO / "questions").glob("*.yaml"), *(REPO / "questions" / "_catalog").glob("*.yaml")]
    assert files
    for path in files:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), path
        target = (path.parent / first.split("=", 1)[1]).resolve()
        assert target.is_file(), f"{path}: schema {target} missing"
