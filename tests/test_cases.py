"""Every file under tests/cases/invalid declares the problems it must produce; one test runs them all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qbank.corpus import load_corpus
from qbank.problems import Level

from .conftest import CASES

INVALID = CASES / "invalid"
EXPECT_RE = re.compile(r"expect:\s*(?:(?P<path>\S+\.\w+)\s+)?(?P<line>\d+):(?P<col>\d+)\s+(?P<code>[a-z0-9-]+)")
ANSWER = "The cache holds one key and one value vector per layer.\n"
PREMIUM = ANSWER + "\n/// premium\n## More\nDetail.\n///\n"
SCRIPT = "from qbank.verify import claim\nclaim('x', 1)\n"
QUESTION = """title: How big is the KV cache of one request at long context?
teaser: >-
  Layers, KV heads, head size and bytes per value multiply into a number that decides how many
  requests fit on a GPU. Work it out for a real model.
topic: kv-cache
difficulty: 2
editorial_rank: 990
access: {access}
kind: derivation
short_title: "KV cache of one request"
description: "The KV cache of one request at long context, sized from layers, heads, head size and bytes."
"""


def cases() -> list[Path]:
    return sorted(p for p in INVALID.iterdir() if p.suffix in {".yaml", ".md"})


def header(path: Path) -> str:
    return path.read_bytes()[:2000].decode("utf-8", errors="replace")


def expectations(path: Path, placed: str) -> set[tuple[str, int, int, str]]:
    sidecar = path.with_suffix(".expect")
    text = ("expect: " + sidecar.read_text()) if sidecar.exists() else header(path)
    found = {
        (m.group("path") or placed, int(m.group("line")), int(m.group("col")), m.group("code"))
        for m in EXPECT_RE.finditer(text)
    }
    assert found, f"{path.name} declares no expectation"
    return found


def place(case: Path, root: Path) -> str:
    """Put the case into the tiny repo with whatever companion files it needs; return where it went."""
    text = header(case)
    m = re.search(r"place:\s*(\S+)", text)
    slug = case.stem
    if m:
        rel = m.group(1)
    elif case.suffix == ".yaml":
        rel = f"questions/{slug}.yaml"
        (root / "answers" / f"{slug}.md").write_text(ANSWER)
        (root / "verify" / f"{slug}.py").write_text(SCRIPT)
    else:
        rel = f"answers/{slug}.md"
        access = re.search(r"access:\s*(free|premium)", text)
        (root / "questions" / f"{slug}.yaml").write_text(
            QUESTION.format(access=access.group(1) if access else "premium")
        )
        (root / "verify" / f"{slug}.py").write_text(SCRIPT)
    (root / rel).write_bytes(case.read_bytes())
    return rel


@pytest.mark.parametrize("case", cases(), ids=lambda p: p.name)
def test_invalid_case(case: Path, tiny_repo: Path) -> None:
    rel = place(case, tiny_repo)
    _corpus, report = load_corpus(tiny_repo)
    got = {(p.path, p.line, p.col, p.code) for p in report.problems if p.level is Level.ERROR}
    assert got == expectations(case, rel), "\n".join(p.text() for p in report.problems)


def test_every_case_has_a_distinct_name() -> None:
    names = [c.stem for c in cases()]
    assert len(names) == len(set(names))
    assert len(names) >= 30


def test_every_cross_check_kind_has_a_case() -> None:
    """Each reference kind the cross-check reports (and duplicates and self-references) is named by a case file,
    for a valid question and for one that failed validation (two code paths)."""
    from qbank.corpus import REF_FIELDS

    by_case = {case.name: {code for *_, code in expectations(case, "x")} for case in cases()}
    covered = set().union(*by_case.values())
    kinds = {code for _field, _catalog, code, _what in REF_FIELDS}
    assert kinds == {"unknown-topic", "unknown-company", "unknown-concept", "unknown-related"}
    assert kinds | {"duplicate-ref", "related-self"} <= covered
    # a question that failed validation is cross-checked from its raw YAML (raw_ref_problems): each kind there too
    invalid_question = [codes for codes in by_case.values() if codes & {"field-type", "field-range"}]
    assert kinds <= set().union(*invalid_question)
