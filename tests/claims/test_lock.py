"""The binding lock: keys robust to line shifts, a faithful round trip, and changes described by meaning."""

from __future__ import annotations

from qbank.claims import Declared, check_answer_text
from qbank.claims.lock import (
    Key,
    changes,
    entries,
    parse_lock,
    render_changes,
    render_lock,
    stale_problems,
    with_answer,
)

VALUES = [
    Declared("h100_nodes", "claim", 4, "nodes", 3),
    Declared("h100_prefill_instances", "claim", 4, "instances", 4),
    Declared("tp", "given", 8, "GPUs", 5),
]
MD = "It runs on 4 nodes{=h100_nodes}, 4 instances and 8 GPUs.\n\nAgain 4 nodes{=h100_nodes}; five{!a story}.\n"


def test_one_line_per_number_without_line_numbers_and_a_round_trip() -> None:
    text = render_lock(entries([check_answer_text("a", "answers/a.md", MD, VALUES)]))
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body == [
        'answers/a.md "4 nodes" -> h100_nodes',
        'answers/a.md "4 instances" -> h100_prefill_instances',
        'answers/a.md "8 GPUs" -> tp',
        'answers/a.md "4 nodes" #2 -> h100_nodes',
        'answers/a.md "five" -> ! a story',
    ]
    locked = parse_lock(text)
    assert locked.targets[Key("answers/a.md", "4 nodes", 2)] == ("h100_nodes", 6)
    assert changes(entries([check_answer_text("a", "answers/a.md", MD, VALUES)]), locked) == []


def test_moving_lines_changes_nothing_but_a_change_of_meaning_is_seen_at_the_number() -> None:
    locked = parse_lock(render_lock(entries([check_answer_text("a", "answers/a.md", MD, VALUES)])))
    shifted = "## A new heading\n\nSome words first.\n\n" + MD
    assert changes(entries([check_answer_text("a", "answers/a.md", shifted, VALUES)]), locked) == []
    renamed = [Declared("h100_instances", "claim", 4, "instances", 4), *VALUES[::2]]
    found = changes(entries([check_answer_text("a", "answers/a.md", shifted, renamed)]), locked)
    assert render_changes(found) == (
        'answers/a.md:5 "4 instances" now binds to h100_instances (was: h100_prefill_instances)\n'
    )


def test_new_and_removed_numbers_and_stale_problems_are_positioned() -> None:
    locked = parse_lock(render_lock(entries([check_answer_text("a", "answers/a.md", MD, VALUES)])))
    edited = MD.replace("and 8 GPUs", "and 4 instances on 8 GPUs").replace("Again 4 nodes{=h100_nodes}; ", "")
    now = entries([check_answer_text("a", "answers/a.md", edited, VALUES)])
    assert render_changes(changes(now, locked)) == (
        'answers/a.md:1 "4 instances" (occurrence 2) binds to h100_prefill_instances (not in the lock)\n'
        'answers/a.md "4 nodes" (occurrence 2) is no longer written (was: h100_nodes)\n'
    )
    problems = [(p.path, p.line, p.col, p.code) for p in stale_problems(now, locked)]
    assert problems == [
        ("answers/a.md", 1, 50, "claims-lock-stale"),
        ("claims.lock", 6, 1, "claims-lock-stale"),
    ]


def test_a_number_that_fails_to_bind_is_left_to_its_own_problem_and_bad_lines_are_reported() -> None:
    locked = parse_lock(render_lock(entries([check_answer_text("a", "answers/a.md", MD, VALUES)])))
    broken = entries([check_answer_text("a", "answers/a.md", MD.replace("8 GPUs", "9 GPUs"), VALUES)])
    assert [c.key.text for c in changes(broken, locked)] == ["8 GPUs"]  # no longer written; '9 GPUs' is unbound
    bad = parse_lock('answers/a.md "4 nodes" => h100_nodes\n')
    assert [(p.line, p.code) for p in stale_problems([], bad)] == [(1, "claims-lock-malformed")]


def test_adding_one_answer_writes_what_a_full_rewrite_would_and_keeps_the_rest_byte_for_byte() -> None:
    a, b, c = (check_answer_text(s, f"answers/{s}.md", MD, VALUES) for s in ("a", "b", "c"))
    without_b = render_lock(entries([a, c]))
    merged = with_answer(without_b, "answers/b.md", entries([b]))
    assert merged == render_lock(entries([a, b, c]))  # b lands between a and c, as `qbank claims --lock` orders it
    # replacing an answer already locked drops its old lines: here b's text changed to one number
    b2 = check_answer_text("b", "answers/b.md", "Only 8 GPUs.\n", VALUES)
    assert with_answer(merged, "answers/b.md", entries([b2])) == render_lock(entries([a, b2, c]))
