"""Claims kept between checks (``claims.kept``, as `qbank serve` keeps them): every kept result equals a fresh
check's, and an answer or a question's fields are bound again exactly when their text or their values change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qbank.claims import check_corpus
from qbank.claims.check import ClaimsReport
from qbank.corpus import Corpus, load_corpus
from qbank.memo import Memo
from qbank.verify.store import write_entry

SLUG = "base-question"
ANSWER = f"answers/{SLUG}.md"
QUESTION = f"questions/{SLUG}.yaml"


def store(root: Path, layers: float) -> None:
    """A stored entry for the case's script, as the runner writes one (renamed over the last one)."""
    values = [
        {"name": "layers", "kind": "given", "value": layers, "unit": "layers", "line": 4},
        {"name": "double_layers", "kind": "claim", "value": 2 * layers, "unit": "", "line": 5},
        {"name": "requests", "kind": "given", "value": 1, "unit": "requests", "line": 6},
    ]
    write_entry(root, {"slug": SLUG, "record": {"api": 1, "values": values, "checks": []},
                       "result": {"outcome": "pass"}})


def fresh(root: Path) -> dict[str, Any]:
    """A check with nothing kept."""
    return check_corpus(load_corpus(root)[0]).to_json()


def kept(root: Path, memo: Memo) -> tuple[Corpus, ClaimsReport]:
    """A check through the memo, as the serve loop runs it."""
    corpus = load_corpus(root, memo=memo)[0]
    return corpus, check_corpus(corpus, memo=memo)


def by_path(report: ClaimsReport) -> dict[str, object]:
    """Each answer's and field's bindings object by its lock path (or path)."""
    return {a.lock_path or a.path: a for a in report.answers}


def test_kept_bindings_equal_a_fresh_check_and_are_reused_while_nothing_changed(tiny_repo: Path) -> None:
    store(tiny_repo, 80)
    memo = Memo()
    _, first = kept(tiny_repo, memo)
    assert first.to_json() == fresh(tiny_repo)
    assert not first.problems, [p.text() for p in first.problems]
    _, second = kept(tiny_repo, memo)
    assert second.to_json() == fresh(tiny_repo)
    assert by_path(second)[ANSWER] is by_path(first)[ANSWER]  # bound once, kept


def test_new_values_in_the_stored_entry_bind_the_answer_again(tiny_repo: Path) -> None:
    store(tiny_repo, 80)
    memo = Memo()
    _, first = kept(tiny_repo, memo)
    store(tiny_repo, 90)  # the script now states other values: "80 layers" and "160 vectors" no longer bind
    _, changed = kept(tiny_repo, memo)
    assert changed.to_json() == fresh(tiny_repo)
    assert by_path(changed)[ANSWER] is not by_path(first)[ANSWER]
    assert any(p.path == ANSWER for p in changed.problems), [p.text() for p in changed.problems]
    store(tiny_repo, 80)
    _, back = kept(tiny_repo, memo)
    assert back.to_json() == fresh(tiny_repo) and not back.problems


def test_an_answer_edit_binds_that_answer_again(tiny_repo: Path) -> None:
    store(tiny_repo, 80)
    memo = Memo()
    kept(tiny_repo, memo)
    answer = tiny_repo / ANSWER
    answer.write_text(answer.read_text().replace("holds 160 vectors", "holds 161 vectors"))
    _, broken = kept(tiny_repo, memo)
    assert broken.to_json() == fresh(tiny_repo)
    assert any(p.path == ANSWER for p in broken.problems), [p.text() for p in broken.problems]


def test_a_question_field_edit_binds_its_fields_again(tiny_repo: Path) -> None:
    store(tiny_repo, 80)
    memo = Memo()
    _, first = kept(tiny_repo, memo)
    before = [a for a in first.answers if a.path == QUESTION]
    assert before  # "one request" in the title binds to the script's `requests`
    _, same = kept(tiny_repo, memo)
    assert [a for a in same.answers if a.path == QUESTION] == before
    assert all(a is b for a, b in zip([a for a in same.answers if a.path == QUESTION], before, strict=True))
    question = tiny_repo / QUESTION
    question.write_text(question.read_text().replace("at long context?", "at 4096 slots?"))
    _, edited = kept(tiny_repo, memo)
    assert edited.to_json() == fresh(tiny_repo)
    assert [p.code for p in edited.problems if p.path == QUESTION], [p.text() for p in edited.problems]
    store(tiny_repo, 90)  # new values reach the fields too (the title's "one request" still binds)
    _, revalued = kept(tiny_repo, memo)
    assert revalued.to_json() == fresh(tiny_repo)
    assert not any(a is b for a in revalued.answers for b in edited.answers if a.path == QUESTION)
