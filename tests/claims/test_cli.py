"""`qbank claims` and the claims stage of `qbank check`, on the tiny corpus plus the claims case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from qbank.claims import values as values_module
from qbank.cli import main

from .conftest import run_script

SLUG = "kv-cache-million-tokens"
ANSWER = f"answers/{SLUG}.md"


@pytest.fixture
def repo(claims_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the claims repo whose records come from running each script once, for real."""
    root = tmp_path / "repo"
    shutil.copytree(claims_repo, root)
    records: dict[str, Any] = {}

    def latest_record(r: Path, slug: str) -> dict[str, Any] | None:
        if slug not in records:
            records[slug] = run_script(r, slug, tmp_path)
        return records[slug]  # type: ignore[no-any-return]

    monkeypatch.setattr(values_module, "latest_record", latest_record)
    return root


def test_check_passes_when_every_number_is_bound(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--root", str(repo), "--format", "text"]) == 0
    captured = capsys.readouterr()
    err, out = captured.err, captured.out
    assert out.endswith("0 errors, 0 warnings in 9 files\n") and not err


def test_check_fails_at_a_wrong_number(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / ANSWER
    path.write_text(path.read_text().replace("320 GiB{=kv_bytes_per_request}", "330 GiB{=kv_bytes_per_request}"))
    path.write_text(path.read_text().replace("holds 80 GB", "holds 81 GB"))
    assert main(["check", "--root", str(repo), "--format", "text"]) == 1
    err = capsys.readouterr().err
    assert f"{ANSWER}:10:41: error: " in err and "[claim-mismatch]" in err
    assert "kv_bytes_per_request = 320 GiB" in err
    assert f"{ANSWER}:18:20: error: " in err and "[claim-unbound]" in err


def test_check_reports_one_problem_for_an_answer_without_a_record(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(values_module, "latest_record", lambda r, s: None)
    assert main(["check", "--root", str(repo), "--format", "json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["path"], p["line"], p["col"], p["code"]) for p in problems] == [
        ("answers/base-question.md", 1, 13, "claims-unverified"),
        (ANSWER, 3, 19, "claims-unverified"),
    ]


def test_claims_json_lists_every_quantity_and_the_summary(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "--root", str(repo), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    answer = next(a for a in doc["answers"] if a["slug"] == SLUG)
    assert answer["summary"] == {"quantities": 41, "bound": 40, "exempt": 1, "unbound": 0}
    first = answer["quantities"][0]
    assert {k: first[k] for k in ("line", "col", "text", "value", "unit", "status")} == {
        "line": 3,
        "col": 19,
        "text": "eighty layers",
        "value": 80,
        "unit": "layers",
        "status": "bound",
    }
    assert first["bound"][0]["name"] == "layers"
    kv = next(q for q in answer["quantities"] if q["text"] == "320 GiB" and q["line"] == 10)
    assert kv["base_value"] == 320 * 2**30 and kv["bound"][0]["shown"] == "320 GiB"
    assert doc["exemptions"] == [
        {"path": ANSWER, "line": 24, "col": 11, "text": "five", "reason": "a count in a story"}
    ]
    # the base question states its two numbers (80 layers, 160 vectors) and leaves no claim unused; the
    # questions' own titles state 3 more ("one request", "1M tokens", "70B")
    assert doc["totals"]["quantities"] == 46 and doc["problems"] == []


def test_claims_text_and_mutation_score(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claims", "--root", str(repo), SLUG]) == 0
    out = capsys.readouterr().out
    assert f"{ANSWER}:10:41" in out and "kv_bytes_per_request = 320 GiB" in out
    assert f"{ANSWER}: 41 quantities, 40 bound, 1 exempt, 0 unbound" in out
    assert main(["claims", "--root", str(repo), "--mutate", SLUG]) == 0
    assert "mutation score: 87/87 = 100.0%" in capsys.readouterr().out


def test_the_lock_is_written_kept_honest_by_check_and_diffed(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # without a lock, check says nothing of it, and the lock diff (the CI step) fails
    assert main(["claims", "--root", str(repo), "--lock-diff"]) == 1
    assert "claims.lock is missing" in capsys.readouterr().out
    assert main(["claims", "--root", str(repo), "--lock"]) == 0
    assert capsys.readouterr().out == "claims.lock: 46 numbers locked (a new lock)\n"
    lock = repo / "claims.lock"
    assert f'{ANSWER} "8 KV heads" -> kv_heads\n' in lock.read_text()
    assert main(["check", "--root", str(repo), "--format", "text"]) == 0
    assert main(["claims", "--root", str(repo), "--lock-diff"]) == 0
    capsys.readouterr()
    # the same number now means something else: check fails at the number, the diff says what changed
    lock.write_text(lock.read_text().replace('"8 KV heads" -> kv_heads', '"8 KV heads" -> q_heads'))
    assert main(["check", "--root", str(repo), "--format", "text"]) == 1
    err = capsys.readouterr().err
    assert f'{ANSWER}:3:53: error: "8 KV heads" now binds to kv_heads (was: q_heads)' in err
    assert "[claims-lock-stale]" in err and "qbank claims --lock" in err
    base = repo.parent / "base.lock"
    base.write_text(lock.read_text())
    assert main(["claims", "--root", str(repo), "--lock-diff", str(base)]) == 1
    out = capsys.readouterr().out
    assert out == f'{ANSWER}:3 "8 KV heads" now binds to kv_heads (was: q_heads)\n1 binding(s) changed against {base}\n'
    # rewriting the lock settles it
    assert main(["claims", "--root", str(repo), "--lock"]) == 0
    assert capsys.readouterr().out.endswith("claims.lock: 46 numbers locked, 1 changed\n")
    assert main(["check", "--root", str(repo), "--format", "text"]) == 0
    assert main(["claims", "--root", str(repo), "--lock", SLUG]) == 2  # the lock covers every answer
