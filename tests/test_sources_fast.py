"""The libyaml path of ``load_yaml`` gives what the pure-Python path gives, or steps aside for it.

The oracle is PyYAML's pure-Python parser (``_load_slow``), which every problem message was written against.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from qbank.sources import Located, _load_fast, _load_slow, load_yaml

REPO = Path(__file__).resolve().parents[1]
CONTENT = sorted((REPO / "questions").rglob("*.yaml")) + sorted((REPO / "tests" / "cases").rglob("*.yaml"))


def same(a: Located | None, b: Located | None) -> bool:
    return a is not None and b is not None and (a.data, a.keys, a.values) == (b.data, b.keys, b.values)


def test_libyaml_is_there() -> None:
    """Without libyaml every file would take the slow path: correct, and ten times slower."""
    assert yaml.__with_libyaml__


@pytest.mark.parametrize("path", CONTENT, ids=lambda p: str(p.relative_to(REPO)))
def test_every_content_file_reads_the_same(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")  # a case file that is not UTF-8 is still YAML-shaped
    fast = _load_fast(text, "f.yaml")
    slow, problems = _load_slow(text, "f.yaml")
    if fast is not None:
        assert not problems and same(fast, slow)
    assert load_yaml(text, "f.yaml") == (_load_slow(text, "f.yaml") if fast is None else (fast, []))


def test_the_bank_takes_the_fast_path() -> None:
    """Every question of the bank is a plain mapping: none should fall back (the speed-up would go unnoticed)."""
    questions = [p for p in (REPO / "questions").glob("*.yaml")]
    assert len(questions) > 50
    slow = [p.name for p in questions if _load_fast(p.read_text(encoding="utf-8"), "q.yaml") is None]
    assert slow == []


TRICKY = (
    'title: "café — \U0001f600 x"\n'
    "kéy: [a, {b: ééé, c: 2}]\n"
    "d: 2026-12-01\n"
    "n: ~\n"
    "yes_no: [yes, no, on, off, true]\n"
    "num: [0x1f, 1_000, 1e3, .5, -.inf, 012]\n"
    "f: |\n  line1\n   é line2\n"
    "g: >-\n  folded\n  text\n"
    "anchor: &a 3\n"
    "q: 'it''s'\n"
    "? complex\n: value\n"
    "nested:\n  - - deep\n    - {x: [1, 2]}\n"
)


def test_tricky_scalars_and_positions() -> None:
    """Non-ASCII columns, implicit types (YAML 1.1 booleans, octal, dates), block styles, an unused anchor."""
    fast = _load_fast(TRICKY, "t.yaml")
    slow, problems = _load_slow(TRICKY, "t.yaml")
    assert not problems and same(fast, slow)
    assert fast is not None and fast.values[("kéy", 1, "c")].col == 22  # columns count characters, not bytes


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1]\nb: *x\n",  # an alias: libyaml hands back the anchored node itself
        "a: 1\na: 2\n",  # a duplicate key
        "a: &x {k: 1}\nb:\n  <<: *x\n",  # a merge key
        "a:\n\t- 1\n",  # a tab
        "a: \x01\n",  # a control character
        "- 1\n- 2\n",  # not a mapping
        "a: [1,\n",  # a syntax error
        "a: 1\n---\nb: 2\n",  # two documents
        "a: !!python/object:os.system x\n",  # a tag the safe constructor refuses
        "a: 2026-13-45\n",  # a date that is not one
    ],
)
def test_anything_else_is_left_to_the_slow_path(text: str) -> None:
    assert _load_fast(text, "b.yaml") is None
    assert load_yaml(text, "b.yaml") == _load_slow(text, "b.yaml")
    assert load_yaml(text, "b.yaml")[1]  # and it is a problem there


def test_alias_is_reported_where_it_is_used() -> None:
    _, problems = load_yaml("a: &x [1]\nc: 2\nb: *x\n", "b.yaml")
    assert [p.text() for p in problems] == [
        "b.yaml:3:4: error: YAML aliases are not allowed; write the value out [yaml-alias]"
    ]


def test_damaged_questions_read_the_same_both_ways() -> None:
    """Real questions with one character deleted, doubled or replaced by a YAML indicator: whatever libyaml makes
    of each, ``load_yaml`` answers what the pure-Python path answers."""
    rng = random.Random(20261206)
    sources = [p.read_text(encoding="utf-8") for p in sorted((REPO / "questions").glob("*.yaml"))[:40]]
    checked = 0
    for text in sources:
        for _ in range(8):
            i = rng.randrange(len(text))
            edit = rng.choice(["delete", "double", "replace"])
            if edit == "delete":
                damaged = text[:i] + text[i + 1 :]
            elif edit == "double":
                damaged = text[:i] + text[i] + text[i:]
            else:
                damaged = text[:i] + rng.choice(":-[]{}&*!|>'\"#%@`,? \n") + text[i + 1 :]
            fast = _load_fast(damaged, "d.yaml")
            slow = _load_slow(damaged, "d.yaml")
            if fast is not None:
                assert slow[1] == [] and same(fast, slow[0]), damaged
            checked += 1
    assert checked == 8 * len(sources)
