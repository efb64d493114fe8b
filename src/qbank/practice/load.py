"""Load practice tests and drills with positions; cross-check them against the corpus; resolve answer keys.

Pure over its inputs except for reading the content files and the verification store's records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ..claims.values import latest_record, record_values
from ..corpus import Corpus, suggest
from ..model import check_slug
from ..problems import Problem, error
from ..sources import Located, load_model, read_text
from ..units import to_base
from .model import DRILL_FILES, ChoiceItem, Drill, NumericItem, OrderItem, PracticeTest

PRACTICE = "practice"
M = TypeVar("M", bound=BaseModel)
DRILLS = "drills"


@dataclass(frozen=True)
class Key:
    """The verified value behind a claim reference, in the unit an item shows."""

    ref: str
    question: str
    claim: str
    value: float
    """In the item's display unit (the claim's own unit when the item names none)."""
    unit: str


@dataclass
class Bank:
    """Every practice test and drill that loaded cleanly, with resolved keys."""

    tests: dict[str, PracticeTest] = field(default_factory=dict)
    drills: dict[str, Drill] = field(default_factory=dict)
    drill_sources: dict[str, dict[str, str]] = field(default_factory=dict)
    positions: dict[str, Located] = field(default_factory=dict)
    keys: dict[tuple[str, int, str], Key] = field(default_factory=dict)
    """(test slug, item index, ref) -> key; ``numeric`` items under their ``answer``, evidence under each ref."""

    def key_of(self, test: str, index: int, ref: str) -> Key:
        """The resolved key of a reference of one item."""
        return self.keys[(test, index, ref)]


def practice_file(slug: str) -> str:
    """Repository path of a practice test."""
    return f"{PRACTICE}/{slug}.yaml"


def drill_path(slug: str, name: str = "drill.yaml") -> str:
    """Repository path of a drill's file."""
    return f"{DRILLS}/{slug}/{name}"


ITEM_KINDS = {"numeric", "choice", "regime", "order"}


def _untagged(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A pydantic location without the discriminator tags of the item union (``items, 2, numeric, answer``)."""
    return tuple(p for i, p in enumerate(loc) if not (p in ITEM_KINDS and i > 0 and isinstance(loc[i - 1], int)))


def _load(path: Path, rel: str, model: type[M]) -> tuple[M | None, Located | None, list[Problem]]:
    """Read and validate one YAML file; every problem at the line:col of its key or value."""
    return load_model(path, rel, model, untag=_untagged)


def _slug_ok(rel: str, stem: str) -> Problem | None:
    try:
        check_slug(stem)
    except ValueError as exc:
        return error(rel, 0, 0, "bad-slug", f"file name: {exc}")
    return None


def load_bank(root: Path) -> tuple[Bank, list[Problem]]:
    """Read ``practice/*.yaml`` and ``drills/*/``; every problem positioned, one bad file hides no other."""
    bank = Bank()
    problems: list[Problem] = []
    folder = root / PRACTICE
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name.startswith(("_", ".")) or path.is_dir():
            continue
        rel = f"{PRACTICE}/{path.name}"
        if path.suffix != ".yaml":
            problems.append(error(rel, 0, 0, "file-extension", f"files in {PRACTICE}/ must end in .yaml"))
            continue
        bad = _slug_ok(rel, path.stem)
        if bad:
            problems.append(bad)
            continue
        test, located, found = _load(path, rel, PracticeTest)
        problems.extend(found)
        if located is not None:
            bank.positions[rel] = located
        if test is not None:
            bank.tests[path.stem] = test
    folder = root / DRILLS
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name.startswith(("_", ".")) or not path.is_dir():
            continue
        bad = _slug_ok(f"{DRILLS}/{path.name}", path.name)
        if bad:
            problems.append(bad)
            continue
        rel = drill_path(path.name)
        if not (path / "drill.yaml").is_file():
            problems.append(error(f"{DRILLS}/{path.name}", 0, 0, "drill-file-missing", f"no {rel}"))
            continue
        drill, located, found = _load(path / "drill.yaml", rel, Drill)
        problems.extend(found)
        if located is not None:
            bank.positions[rel] = located
        sources, found = _drill_sources(path, path.name)
        problems.extend(found)
        if drill is not None and len(sources) == len(DRILL_FILES):
            bank.drills[path.name] = drill
            bank.drill_sources[path.name] = sources
    return bank, problems


def _drill_sources(folder: Path, slug: str) -> tuple[dict[str, str], list[Problem]]:
    out: dict[str, str] = {}
    problems: list[Problem] = []
    for name in DRILL_FILES:
        rel = drill_path(slug, name)
        if not (folder / name).is_file():
            problems.append(error(rel, 0, 0, "drill-file-missing", f"a drill needs {name} beside drill.yaml"))
            continue
        text, found = read_text(folder / name, rel)
        problems.extend(found)
        if text is None:
            continue
        try:
            compile(text, rel, "exec")
        except SyntaxError as exc:
            problems.append(error(rel, exc.lineno or 1, exc.offset or 1, "drill-syntax", f"{exc.msg}"))
            continue
        if name.endswith("_tests.py") and "def test_" not in text:
            problems.append(error(rel, 1, 1, "drill-no-tests", "a test file defines at least one test_* function"))
            continue
        out[name] = text
    return out, problems


def _at(bank: Bank, rel: str, loc: tuple[str | int, ...], code: str, message: str) -> Problem:
    located = bank.positions.get(rel)
    pos = located.value_pos(loc) if located else None
    return error(rel, pos.line if pos else 1, pos.col if pos else 1, code, message)


def _resolve(
    root: Path, corpus: Corpus, ref: str, unit: str | None, free_only: bool
) -> tuple[Key | None, tuple[str, str] | None]:
    """The key behind ``question:claim``, or (code, message) saying why there is none."""
    question, name = ref.split(":", 1)
    if question not in corpus.questions:
        hint = suggest(question, list(corpus.questions))
        return None, ("practice-unknown-question", f"no question {question!r}{hint}")
    if question not in corpus.verify_scripts:
        return None, ("practice-key-unverified", f"{question!r} has no verification script, so nothing backs this key")
    if free_only and corpus.questions[question].access == "premium":
        return None, (
            "practice-premium-key",
            f"{question!r} is premium: a free test may not publish a value its script derives",
        )
    record: dict[str, Any] | None = latest_record(root, question)
    declared = record_values(record)
    if record is None or declared is None:
        return None, ("practice-key-unverified",
                      f"verify/{question}.py has no verification record yet (run qbank verify)")
    if record.get("outcome") not in (None, "pass"):
        return None, ("practice-key-unverified",
                      f"verify/{question}.py did not pass ({record.get('outcome')}), so it backs no key")
    by_name = {d.name: d for d in declared}
    if name not in by_name:
        return None, (
            "practice-unknown-claim",
            f"verify/{question}.py declares no value {name!r}{suggest(name, sorted(by_name))}",
        )
    d = by_name[name]
    base, dim = to_base(d.value, d.unit)
    shown = unit if unit is not None else (d.unit or "")
    one, want = to_base(1.0, shown or None)
    if dim != want:
        return None, (
            "practice-unit-mismatch",
            f"{ref} is in {d.unit or 'a plain number'} ({dim}); "
            f"it cannot be answered in {shown or 'a plain number'} ({want})",
        )
    return Key(ref, question, name, base / one, shown), None


def cross_check(root: Path, corpus: Corpus, bank: Bank) -> list[Problem]:
    """References to topics, companies and questions; answer keys resolved against verified values."""
    problems: list[Problem] = []
    for slug, test in bank.tests.items():
        rel = practice_file(slug)
        if test.topic is not None and test.topic not in corpus.topics:
            problems.append(_at(bank, rel, ("topic",), "unknown-topic",
                                f"unknown topic {test.topic!r}{suggest(test.topic, list(corpus.topics))}"))
        if test.company is not None and test.company not in corpus.companies:
            problems.append(_at(bank, rel, ("company",), "unknown-company",
                                f"unknown company {test.company!r}{suggest(test.company, list(corpus.companies))}"))
        free_only = test.access == "free"
        for i, item in enumerate(test.items):
            refs: list[tuple[tuple[str | int, ...], str, str | None]] = []
            if isinstance(item, NumericItem):
                refs.append((("items", i, "answer"), item.answer, item.unit))
            elif isinstance(item, (ChoiceItem, OrderItem)):
                refs += [(("items", i, "evidence", j), r, None) for j, r in enumerate(item.evidence)]
                if item.see is not None and item.see not in corpus.questions:
                    problems.append(_at(bank, rel, ("items", i, "see"), "practice-unknown-question",
                                        f"no question {item.see!r}{suggest(item.see, list(corpus.questions))}"))
            for loc, ref, unit in refs:
                key, why = _resolve(root, corpus, ref, unit, free_only)
                if key is not None:
                    bank.keys[(slug, i, ref)] = key
                elif why is not None:
                    problems.append(_at(bank, rel, loc, why[0], why[1]))
    for slug, drill in bank.drills.items():
        rel = drill_path(slug)
        if drill.topic not in corpus.topics:
            problems.append(_at(bank, rel, ("topic",), "unknown-topic",
                                f"unknown topic {drill.topic!r}{suggest(drill.topic, list(corpus.topics))}"))
        for j, c in enumerate(drill.companies):
            if c not in corpus.companies:
                problems.append(_at(bank, rel, ("companies", j), "unknown-company",
                                    f"unknown company {c!r}{suggest(c, list(corpus.companies))}"))
        if drill.see is not None and drill.see not in corpus.questions:
            problems.append(_at(bank, rel, ("see",), "practice-unknown-question",
                                f"no question {drill.see!r}{suggest(drill.see, list(corpus.questions))}"))
    topics_with_tests = {t.topic for t in bank.tests.values() if t.topic}
    for topic in sorted(topics_with_tests):
        tests = [s for s, t in bank.tests.items() if t.topic == topic]
        if all(bank.tests[s].access == "premium" for s in tests):
            first = sorted(tests)[0]
            problems.append(_at(bank, practice_file(first), ("access",), "practice-no-free-sample",
                                f"topic {topic!r} has only premium tests; give it a free sample test"))
    return problems
