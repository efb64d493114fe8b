"""Concept explanations: their numbers bind to the worked example's values, positioned in the catalog file."""

from __future__ import annotations

from pathlib import Path

from qbank.claims import Declared
from qbank.claims.concepts import block_origin, check_concepts
from qbank.claims.lock import entries, parse_lock, render_lock, stale_problems
from qbank.corpus import load_corpus

CATALOG = "questions/_catalog/concepts.yaml"
VALUES = [
    Declared("layers", "given", 80, "layers", 3),
    Declared("double_layers", "claim", 160, "", 4),
    Declared("unused_here", "claim", 7, "", 5),
]
LINE3 = "A model of 80 layers{=layers} states 160 first and 999 second."
HEAD = """concepts:
  - slug: kv-cache
    title: KV cache
    short_title: "Test concept kv-cache"
    description: "The kv-cache concept entry of the qbank test corpus, with a description long enough for a snippet."
    summary: Keys and values of past tokens kept per layer.
"""


def repo_with(root: Path, entry: str) -> Path:
    (root / CATALOG).write_text(HEAD + entry, encoding="utf-8")
    return root


def values_for(_root: Path, slug: str) -> list[Declared] | None:
    return VALUES if slug == "base-question" else None


def test_numbers_bind_and_problems_sit_at_their_place_in_the_catalog(tiny_repo: Path) -> None:
    repo_with(
        tiny_repo,
        "    explanation: |\n"
        "      ## A worked number\n"
        "\n"
        f"      {LINE3}\n"
        "    worked_example: base-question\n",
    )
    corpus, report = load_corpus(tiny_repo)
    assert not report.errors, [p.text() for p in report.problems]
    (claims,) = check_concepts(corpus, values_for)
    assert claims.path == CATALOG
    bound = {b.quantity.text: [v.name for v in b.values] for b in claims.bindings if b.ok}
    assert bound == {"80 layers": ["layers"], "160": ["double_layers"]}
    # "999" is on the explanation's line 3: file line 7 + 3 = 10, after the block's 6 columns of indentation
    unbound = [(p.path, p.line, p.col, p.code) for p in claims.problems]
    assert unbound == [(CATALOG, 10, 6 + LINE3.index("999") + 1, "claim-unbound")]
    lock = render_lock(entries([claims]))
    assert f'{CATALOG}#kv-cache "80 layers" -> layers' in lock and f'{CATALOG}#kv-cache "160" -> double_layers' in lock


def test_an_explanation_that_binds_nothing_and_the_script_s_other_claims(tiny_repo: Path) -> None:
    repo_with(
        tiny_repo,
        "    explanation: |\n      Words, a formula $x = y$ and no number at all.\n    worked_example: base-question\n",
    )
    corpus, _ = load_corpus(tiny_repo)
    (claims,) = check_concepts(corpus, values_for)
    # the script's unstated claims are the answer's business, not the concept's
    assert [(p.line, p.code) for p in claims.problems] == [(7, "concept-no-worked-number")]


def test_each_concept_is_locked_on_its_own(tiny_repo: Path) -> None:
    second = HEAD.split("\n", 1)[1].replace("kv-cache", "paging").replace("KV cache", "Paging")
    repo_with(
        tiny_repo,
        "    explanation: |\n      It has 80 layers{=layers}.\n    worked_example: base-question\n"
        + second
        + "    explanation: |\n      Also 80 layers{=layers}.\n    worked_example: base-question\n",
    )
    (tiny_repo / "questions/base-question.yaml").write_text(
        (tiny_repo / "questions/base-question.yaml").read_text().replace("[kv-cache]", "[kv-cache, paging]")
    )
    corpus, report = load_corpus(tiny_repo)
    assert not report.errors, [p.text() for p in report.problems]
    now = entries(check_concepts(corpus, values_for))
    # an edit to one explanation never renumbers another's occurrences; problems name the real file
    assert [e.key.shown() for e in now] == [f'{CATALOG}#kv-cache "80 layers"', f'{CATALOG}#paging "80 layers"']
    stale = stale_problems(now, parse_lock(render_lock(now).replace("-> layers", "-> other", 1)))
    assert [(p.path, p.line, p.code) for p in stale] == [(CATALOG, 8, "claims-lock-stale")]


def test_worked_example_cross_checks(tiny_repo: Path) -> None:
    cases = {
        "    explanation: |\n      Text.\n": "concept-worked-example-missing",
        "    explanation: |\n      Text.\n    worked_example: no-such-question\n": "unknown-worked-example",
        "    worked_example: base-question\n": "worked-example-unused",
    }
    for entry, code in cases.items():
        repo_with(tiny_repo, entry)
        _, report = load_corpus(tiny_repo)
        assert [p.code for p in report.problems if p.level.value == "error"] == [code], entry
    repo_with(tiny_repo, "    explanation: |\n      Text.\n    worked_example: base-question\n")
    (tiny_repo / "questions/base-question.yaml").write_text(
        (tiny_repo / "questions/base-question.yaml").read_text().replace("concepts: [kv-cache]", "concepts: []")
    )
    _, report = load_corpus(tiny_repo)
    assert [p.code for p in report.problems if p.level.value == "error"] == ["worked-example-unrelated"]


def test_block_origin_of_literal_and_folded_blocks() -> None:
    lines = ["x:", "  explanation: |", "", "      text", "  worked_example: a"]
    assert block_origin(lines, 2) == (2, 6)
    assert block_origin(["  explanation: >-", "    folded"], 1) == (1, -1)
    assert block_origin(["  explanation: |-", "    kept"], 1) == (1, 4)
