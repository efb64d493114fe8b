"""`qbank new question` creates files that pass check (and run as a verification script) as created."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from qbank.cli import main
from qbank.corpus import load_corpus
from qbank.problems import Level


def test_new_question_passes_check_and_runs(tiny_repo: Path, tmp_path: Path) -> None:
    assert (
        main(
            [
                "new",
                "question",
                "--root",
                str(tiny_repo),
                "--slug",
                "fresh-one",
                "--topic",
                "kv-cache",
                "--company",
                "xai",
                "--kind",
                "code-drill",
            ]
        )
        == 0
    )
    corpus, report = load_corpus(tiny_repo)
    assert report.errors == 0, report.sorted()
    assert {p.code for p in report.problems} == {"todo"}  # TODOs warn, so a --strict build refuses them
    assert corpus.questions["fresh-one"].companies == ["xai"]
    assert corpus.answers["fresh-one"].premium[0].heading == "The full derivation"
    out = tmp_path / "record.json"
    res = subprocess.run(
        [sys.executable, str(tiny_repo / "verify" / "fresh-one.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "QBANK_VERIFY_OUT": str(out)},
        cwd=tmp_path,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    record = json.loads(out.read_text())
    assert [v["kind"] for v in record["values"]] == ["given", "claim"]
    assert all(c["ok"] for c in record["checks"])


def test_free_question_has_no_premium_block(tiny_repo: Path) -> None:
    assert (
        main(
            [
                "new",
                "question",
                "--root",
                str(tiny_repo),
                "--slug",
                "free-one",
                "--topic",
                "kv-cache",
                "--access",
                "free",
            ]
        )
        == 0
    )
    corpus, report = load_corpus(tiny_repo)
    assert report.errors == 0 and corpus.answers["free-one"].premium == ()


def test_refuses_existing_slug_and_unknown_topic(tiny_repo: Path, capsys: object) -> None:
    before = sorted(p.relative_to(tiny_repo) for p in tiny_repo.rglob("*"))
    assert main(["new", "question", "--root", str(tiny_repo), "--slug", "base-question", "--topic", "kv-cahce"]) == 1
    assert sorted(p.relative_to(tiny_repo) for p in tiny_repo.rglob("*")) == before
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert (
        "questions/base-question.yaml:1:1: error: a question named 'base-question' already exists [slug-exists]" in err
    )
    assert "questions/_catalog/topics.yaml:1:1: error: unknown topic 'kv-cahce' (did you mean 'kv-cache'?)" in err


def test_refuses_slug_that_escapes(tiny_repo: Path) -> None:
    assert main(["new", "question", "--root", str(tiny_repo), "--slug", "../evil", "--topic", "kv-cache"]) == 1
    assert not (tiny_repo.parent / "evil.yaml").exists()
    _corpus, report = load_corpus(tiny_repo)
    assert not [p for p in report.problems if p.level is Level.ERROR]
