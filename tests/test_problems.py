"""Problems as data and their three output formats."""

from __future__ import annotations

import json

from qbank.problems import Report, error, render, warning


def sample() -> Report:
    report = Report(files=3)
    report.extend(
        [
            warning("b.md", 2, 1, "claim-unused", "declared but never stated"),
            error("a.yaml", 10, 4, "field-type", "votes: 50% off"),
            error("a.yaml", 3, 1, "yaml-syntax", "bad\nnews"),
        ]
    )
    report.extend([error("a.yaml", 3, 1, "yaml-syntax", "bad\nnews")])  # exact duplicates are dropped
    return report


def test_text_is_sorted_with_summary_last() -> None:
    out = render(sample(), "text").splitlines()
    assert out[0] == "a.yaml:3:1: error: bad"
    assert out[2] == "a.yaml:10:4: error: votes: 50% off [field-type]"
    assert out[-1] == "2 errors, 1 warning in 3 files"


def test_github_escapes_newlines_and_percent() -> None:
    out = render(sample(), "github").splitlines()
    assert out[0] == "::error file=a.yaml,line=3,col=1,title=yaml-syntax::bad%0Anews [yaml-syntax]"
    assert out[1] == "::error file=a.yaml,line=10,col=4,title=field-type::votes: 50%25 off [field-type]"
    assert out[2].startswith("::warning file=b.md,line=2,col=1")


def test_json_round_trips() -> None:
    payload = json.loads(render(sample(), "json"))
    assert (payload["errors"], payload["warnings"], payload["files"]) == (2, 1, 3)
    assert payload["problems"][0] == {
        "path": "a.yaml",
        "line": 3,
        "col": 1,
        "level": "error",
        "code": "yaml-syntax",
        "message": "bad\nnews",
    }


def test_strict_turns_warnings_into_failure() -> None:
    report = Report(problems=[warning("x", 1, 1, "w", "m")])
    assert not report.failed() and report.failed(strict=True)
