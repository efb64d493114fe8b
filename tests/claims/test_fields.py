"""A question's own fields: their numbers bind to its script's values, positioned in the question's YAML."""

from __future__ import annotations

from pathlib import Path

from qbank.claims import Declared
from qbank.claims.fields import check_fields
from qbank.claims.lock import entries, render_lock
from qbank.corpus import load_corpus

REL = "questions/base-question.yaml"
VALUES = [
    Declared("layers", "given", 80, "layers", 3),
    Declared("double_layers", "claim", 160, "", 4),
    Declared("unused_here", "claim", 7, "", 5),
]
TITLE = "Why does a model of 80 layers state 999 at once?"


def write_question(root: Path, title: str, teaser: str, summaries: list[str]) -> None:
    """The tiny corpus's question with these fields (the rest as the case has them)."""
    lines = [
        "# yaml-language-server: $schema=../schemas/question.schema.json",
        f"title: {title}",
        "teaser: >-",
        *(f"  {t}" for t in teaser.split("\n")),
        "topic: kv-cache",
        "companies: [xai]",
        "difficulty: 2",
        "editorial_rank: 990",
        "access: premium",
        "kind: derivation",
        "concepts: [kv-cache]",
        'short_title: "Test question base-question"',
        'description: "The base-question test question of the qbank test corpus, with a description long enough '
        'for a snippet."',
        "premium_summaries:",
        *(f'  - "{s}"' for s in summaries),
    ]
    (root / REL).write_text("\n".join(lines) + "\n", encoding="utf-8")


def values_for(_root: Path, slug: str) -> list[Declared] | None:
    return VALUES if slug == "base-question" else None


def claims_of(root: Path) -> dict[str, list[tuple[str, int, int, str]]]:
    """Each checked field's problems, keyed by its lock path's field: (text, line, col, code)."""
    corpus, report = load_corpus(root)
    assert not report.errors, [p.text() for p in report.problems]
    out = {}
    for claims in check_fields(corpus, values_for):
        assert claims.path == REL
        out[claims.lock_path.split("#", 1)[1]] = [
            (p.message.split('"')[1], p.line, p.col, p.code) for p in claims.problems
        ]
    return out


SUMMARIES = ["The section works 160 out for the model's layers, then 777 appears from nowhere."]
TEASER = "A model of 80 layers starts a teaser long enough for the list pages.\nThen 555 follows on the next line."
WORDS = "A teaser with words only, and long enough for the search snippet of the list pages."


def test_numbers_bind_and_an_unbound_number_sits_at_its_column_in_a_one_line_title(tiny_repo: Path) -> None:
    write_question(tiny_repo, TITLE, TEASER, SUMMARIES)
    found = claims_of(tiny_repo)
    assert found["title"] == [("999", 2, len("title: ") + TITLE.index("999") + 1, "claim-unbound")]
    write_question(tiny_repo, f'"{TITLE}"', TEASER, SUMMARIES)  # a quoted scalar: its text starts a column later
    assert claims_of(tiny_repo)["title"] == [("999", 2, len('title: "') + TITLE.index("999") + 1, "claim-unbound")]


def test_a_folded_teaser_places_its_numbers_at_the_block_s_first_line(tiny_repo: Path) -> None:
    write_question(tiny_repo, TITLE, TEASER, SUMMARIES)
    # "teaser: >-" is line 3; its text starts on line 4, and folding loses the columns, so 555 sits at 4:1
    assert claims_of(tiny_repo)["teaser"] == [("555", 4, 1, "claim-unbound")]


def test_premium_summaries_are_checked_one_line_each(tiny_repo: Path) -> None:
    write_question(tiny_repo, TITLE, TEASER, SUMMARIES)
    found = claims_of(tiny_repo)
    line = (tiny_repo / REL).read_text().split("\n").index(f'  - "{SUMMARIES[0]}"') + 1
    col = len('  - "') + SUMMARIES[0].index("777") + 1
    assert found["premium_summaries.0"] == [("777", line, col, "claim-unbound")]  # 160 binds to double_layers


def test_bindings_are_locked_per_field_and_the_script_s_other_claims_are_not_unused(tiny_repo: Path) -> None:
    write_question(
        tiny_repo,
        "How does a model of 80 layers hold its cache?",
        WORDS,
        ["The section works 160 out for the model's layers."],
    )
    corpus, _ = load_corpus(tiny_repo)
    checked = check_fields(corpus, values_for)
    # fields with no number are not checked at all; unused_here and the rest are the answer's business
    assert [c.lock_path for c in checked] == [f"{REL}#title", f"{REL}#premium_summaries.0"]
    assert [p.code for c in checked for p in c.problems] == []
    lock = render_lock(entries(checked))
    assert f'{REL}#title "80 layers" -> layers' in lock
    assert f'{REL}#premium_summaries.0 "160" -> double_layers' in lock


def test_a_count_in_words_binds_only_to_its_noun(tiny_repo: Path) -> None:
    write_question(
        tiny_repo,
        "How does one GPU hold a model of 80 layers?",
        WORDS,
        ["The section holds words only, no number in it at all."],
    )
    found = claims_of(tiny_repo)
    assert found["title"] == [("one GPU", 2, len("title: How does ") + 1, "claim-unbound")]


def test_a_question_without_a_record_is_left_to_its_answer(tiny_repo: Path) -> None:
    write_question(tiny_repo, TITLE, TEASER, SUMMARIES)
    corpus, _ = load_corpus(tiny_repo)
    # its answer reports claims-unverified once; the fields add nothing until the script has run
    assert check_fields(corpus, lambda _root, _slug: None) == []
