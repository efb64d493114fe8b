"""The whole content set: load every file, validate it, and cross-check references between files."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .answers import Answer, parse_answer
from .memo import Memo, kept_by_stamp
from .model import Company, Concept, Question, Topic, check_slug
from .problems import Problem, Report, error, warning
from .sources import Located, Pos, load_model, load_yaml, read_text, validation_problems

QUESTIONS = "questions"
CATALOG = "questions/_catalog"
ANSWERS = "answers"
VERIFY = "verify"

M = TypeVar("M", bound=BaseModel)


@dataclass
class Corpus:
    """Everything that loaded cleanly, keyed by slug, plus where each question's fields live."""

    root: Path
    topics: dict[str, Topic] = field(default_factory=dict)
    companies: dict[str, Company] = field(default_factory=dict)
    concepts: dict[str, Concept] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)
    verify_scripts: dict[str, Path] = field(default_factory=dict)
    positions: dict[str, Located] = field(default_factory=dict)
    invalid: set[str] = field(default_factory=set)
    """Slugs of catalog items and questions that exist but failed validation (no cascade of unknown refs)."""

    def question_path(self, slug: str) -> str:
        """Repository-relative path of a question's YAML file."""
        return f"{QUESTIONS}/{slug}.yaml"

    def answer_path(self, slug: str) -> str:
        """Repository-relative path of a question's answer."""
        return f"{ANSWERS}/{slug}.md"

    def verify_path(self, slug: str) -> str:
        """Repository-relative path of a question's verification script."""
        return f"{VERIFY}/{slug}.py"

    def topic_questions(self, topic: str) -> list[str]:
        """Slugs of a topic's questions, easiest first, then by editorial rank."""
        qs = [s for s, q in self.questions.items() if q.topic == topic]
        return sorted(qs, key=lambda s: (self.questions[s].difficulty, self.questions[s].editorial_rank, s))


def suggest(name: str, known: list[str]) -> str:
    """A ' (did you mean ...?)' suffix when a close match exists."""
    return _suggestion(name, tuple(known))


@lru_cache(maxsize=256)
def _suggestion(name: str, known: tuple[str, ...]) -> str:
    """:func:`suggest`, kept by its inputs: `qbank serve` reports the same unknown names on every save, and
    each one is compared with every known slug (a thousand questions for an unknown question)."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _load_list(
    root: Path, rel: str, key: str, model: type[M], report: Report, invalid: set[str]
) -> list[tuple[M, Pos, Located, int]]:
    """Load a catalog file ``{key: [items]}``, validating each item alone so one bad item hides no other."""
    path = root / rel
    if not path.exists():
        report.extend([error(rel, 0, 0, "catalog-missing", f"catalog file {rel} is missing")])
        return []
    report.files += 1
    text, problems = read_text(path, rel)
    report.extend(problems)
    if text is None:
        return []
    located, problems = load_yaml(text, rel)
    report.extend(problems)
    if located is None:
        return []
    data = located.data
    extra = [k for k in data if k != key]
    for k in extra:
        pos = located.key_pos((k,))
        report.extend([error(rel, pos.line, pos.col, "field-unknown", f"unknown field {k!r}; expected only {key!r}")])
    items = data.get(key)
    if not isinstance(items, list):
        pos = located.value_pos((key,)) if key in data else Pos(1, 1)
        report.extend([error(rel, pos.line, pos.col, "field-type", f"{key!r} must be a list")])
        return []
    out: list[tuple[M, Pos, Located, int]] = []
    for i, item in enumerate(items):
        try:
            out.append((model.model_validate(item), located.value_pos((key, i)), located, i))
        except ValidationError as exc:
            report.extend(validation_problems(exc, located, rel, loc_prefix=(key, i)))
            if isinstance(item, dict) and isinstance(item.get("slug"), str):
                invalid.add(item["slug"])
    return out


def _unique(items: list[tuple[M, Pos, Located, int]], rel: str, key: str, report: Report) -> dict[str, M]:
    """Index catalog items by slug; a second item with the same slug is a problem at its slug."""
    out: dict[str, M] = {}
    for item, _pos, located, idx in items:
        slug: str = getattr(item, "slug")  # noqa: B009 - every catalog model has a slug
        if slug in out:
            p = located.value_pos((key, idx, "slug"))
            report.extend([error(rel, p.line, p.col, "duplicate-slug", f"{key[:-1]} {slug!r} is defined twice")])
            continue
        out[slug] = item
    return out


def _slug_problem(rel: str, stem: str) -> Problem | None:
    try:
        check_slug(stem)
    except ValueError as exc:  # PydanticCustomError is a ValueError
        return error(rel, 0, 0, "bad-slug", f"file name: {exc}")
    return None


def _ref_problem(
    corpus: Corpus, slug: str, loc: tuple[Any, ...], name: str, known: dict[str, Any], code: str, what: str
) -> Problem | None:
    if name in known or name in corpus.invalid:
        return None
    pos = corpus.positions[corpus.question_path(slug)].value_pos(loc)
    return error(
        corpus.question_path(slug),
        pos.line,
        pos.col,
        code,
        f"unknown {what} {name!r}{suggest(name, list(known))}",
    )


def _content_files(root: Path, folder: str, suffix: str) -> tuple[dict[str, Path], list[Problem]]:
    """Slug -> path for the files of one content folder; wrong extensions and bad names are problems."""
    base = root / folder
    found: dict[str, Path] = {}
    problems: list[Problem] = []
    if not base.is_dir():
        return found, problems
    # scandir: the entry's type comes with the listing (a stat per file was a tenth of a save's load at 1,000)
    with os.scandir(base) as listing:
        entries = sorted((e.name, e.is_dir()) for e in listing)
    for name, is_dir in entries:
        if name.startswith(("_", ".")) or is_dir:
            continue
        path = base / name
        rel = f"{folder}/{name}"
        if path.suffix != suffix:
            if path.suffix in {".yml", ".markdown", ".ipynb"} or folder == QUESTIONS:
                problems.append(error(rel, 0, 0, "file-extension", f"files in {folder}/ must end in {suffix}"))
            continue
        bad = _slug_problem(rel, path.stem)
        if bad:
            problems.append(bad)
            continue
        found[path.stem] = path
    return found, problems


def todo_problems(corpus: Corpus) -> list[Problem]:
    """A warning for every TODO left in a question or answer (so `--strict` builds refuse them)."""
    out: list[Problem] = []
    for slug in corpus.questions:
        rel = corpus.question_path(slug)
        located = corpus.positions[rel]
        for name in ("title", "short_title", "description", "teaser"):
            if "TODO" in getattr(corpus.questions[slug], name):
                pos = located.value_pos((name,))
                out.append(warning(rel, pos.line, pos.col, "todo", f"{name} still holds a TODO"))
        for i, summary in enumerate(corpus.questions[slug].premium_summaries):
            if "TODO" in summary:
                pos = located.value_pos(("premium_summaries", i))
                out.append(warning(rel, pos.line, pos.col, "todo", "a premium summary still holds a TODO"))
    for answer in corpus.answers.values():
        for i, line in enumerate(answer.text.split("\n"), start=1):
            if "TODO" in line:
                out.append(warning(answer.path, i, line.index("TODO") + 1, "todo", "the answer still holds a TODO"))
    return out


REF_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("topic", "topics", "unknown-topic", "topic"),
    ("companies", "companies", "unknown-company", "company"),
    ("concepts", "concepts", "unknown-concept", "concept"),
    ("related", "questions", "unknown-related", "question"),
)


def raw_ref_problems(corpus: Corpus, slug: str) -> list[Problem]:
    """References of a question that failed validation, read from its raw YAML, so one bad field hides no other."""
    located = corpus.positions.get(corpus.question_path(slug))
    if located is None or not isinstance(located.data, dict):
        return []
    out: list[Problem] = []
    for field_name, catalog, code, what in REF_FIELDS:
        raw = located.data.get(field_name)
        items = [((field_name,), raw)] if isinstance(raw, str) else (
            [((field_name, i), v) for i, v in enumerate(raw)] if isinstance(raw, list) else []
        )
        known: dict[str, Any] = getattr(corpus, catalog)
        for loc, name in items:
            # a malformed slug was reported by validation already (bad-slug at the same place)
            if isinstance(name, str) and name != slug and _slug_problem("", name) is None:
                p = _ref_problem(corpus, slug, loc, name, known, code, what)
                if p:
                    out.append(p)
    return out


def concept_example_problems(corpus: Corpus) -> list[Problem]:
    """A concept's explanation needs a worked example: a known question that names the concept."""
    rel = f"{CATALOG}/concepts.yaml"
    located = corpus.positions.get(rel)
    if located is None:
        return []
    order = [item.get("slug") if isinstance(item, dict) else None for item in located.data.get("concepts") or []]
    out: list[Problem] = []
    for slug, c in corpus.concepts.items():
        idx = order.index(slug) if slug in order else 0
        example = c.worked_example
        if example is None:
            if c.explanation.strip():
                pos = located.key_pos(("concepts", idx, "explanation"))
                out.append(error(rel, pos.line, pos.col, "concept-worked-example-missing",
                                 f"concept {slug!r} has an explanation but no 'worked_example': name the question "
                                 "whose script computes its worked number"))
            continue
        pos = located.value_pos(("concepts", idx, "worked_example"))
        if example not in corpus.questions:
            if example not in corpus.invalid:
                out.append(error(rel, pos.line, pos.col, "unknown-worked-example",
                                 f"unknown question {example!r}{suggest(example, list(corpus.questions))}"))
        elif slug not in corpus.questions[example].concepts:
            out.append(error(rel, pos.line, pos.col, "worked-example-unrelated",
                             f"question {example!r} does not name concept {slug!r} in its concepts"))
        elif not c.explanation.strip():
            out.append(error(rel, pos.line, pos.col, "worked-example-unused",
                             f"concept {slug!r} names a worked example but has no explanation to work it in"))
    return out


def cross_check(corpus: Corpus, report: Report, answer_files: dict[str, Path], verify_files: dict[str, Path]) -> None:
    """References, duplicates, missing and orphan files, and access rules between files."""
    problems: list[Problem] = []
    for company in corpus.companies.values():
        for i, rnd in enumerate(company.process):
            if rnd.topic not in corpus.topics:
                rel = f"{CATALOG}/companies.yaml"
                located = corpus.positions.get(rel)
                idx = list(corpus.companies).index(company.slug)
                pos = located.value_pos(("companies", idx, "process", i, "topic")) if located else Pos(0, 0)
                problems.append(
                    error(
                        rel,
                        pos.line,
                        pos.col,
                        "unknown-topic",
                        f"unknown topic {rnd.topic!r}{suggest(rnd.topic, list(corpus.topics))}",
                    )
                )
    problems.extend(concept_example_problems(corpus))
    for slug, q in corpus.questions.items():
        qrel = corpus.question_path(slug)
        checks: list[tuple[tuple[str | int, ...], str, dict[str, Any], str, str]] = [
            (("topic",), q.topic, corpus.topics, "unknown-topic", "topic")
        ]
        checks += [
            (("companies", i), c, corpus.companies, "unknown-company", "company") for i, c in enumerate(q.companies)
        ]
        checks += [
            (("concepts", i), c, corpus.concepts, "unknown-concept", "concept") for i, c in enumerate(q.concepts)
        ]
        checks += [
            (("related", i), r, corpus.questions, "unknown-related", "question") for i, r in enumerate(q.related)
        ]
        for loc, name, known, code, what in checks:
            p = _ref_problem(corpus, slug, loc, name, known, code, what)
            if p:
                problems.append(p)
        located = corpus.positions[qrel]
        for field_name in ("companies", "concepts", "related"):
            seen: set[str] = set()
            for i, name in enumerate(getattr(q, field_name)):
                if name in seen:
                    pos = located.value_pos((field_name, i))
                    problems.append(
                        error(
                            qrel,
                            pos.line,
                            pos.col,
                            "duplicate-ref",
                            f"{name!r} is listed twice in {field_name}",
                        )
                    )
                seen.add(name)
        for i, r in enumerate(q.related):
            if r == slug:
                pos = located.value_pos(("related", i))
                problems.append(
                    error(qrel, pos.line, pos.col, "related-self", "a question cannot be related to itself")
                )
        if slug not in answer_files:
            problems.append(error(qrel, 1, 1, "answer-missing", f"no answer: expected {corpus.answer_path(slug)}"))
        if slug not in verify_files:
            problems.append(
                error(
                    qrel,
                    1,
                    1,
                    "verify-missing",
                    f"no verification script: expected {corpus.verify_path(slug)}",
                )
            )
        answer = corpus.answers.get(slug)
        if answer is not None:
            if q.access == "premium" and not answer.premium:
                pos = located.value_pos(("access",))
                problems.append(
                    error(
                        qrel,
                        pos.line,
                        pos.col,
                        "premium-missing",
                        f"a premium question needs at least one '/// premium' block in {answer.path}",
                    )
                )
            if q.access == "premium" and len(q.premium_summaries) != len(answer.premium):
                have = "premium_summaries" in (located.data or {})
                pos = located.key_pos(("premium_summaries",)) if have else Pos(1, 1)
                problems.append(
                    error(
                        qrel,
                        pos.line,
                        pos.col,
                        "premium-summary-count",
                        f"{answer.path} has {len(answer.premium)} premium section(s) and premium_summaries "
                        f"{len(q.premium_summaries)}: give one free line per section, in order",
                    )
                )
            if q.access == "free" and answer.premium:
                problems.append(
                    error(
                        answer.path,
                        answer.premium[0].line,
                        1,
                        "premium-in-free",
                        f"{qrel} is free, so its answer cannot have premium blocks",
                    )
                )
    for slug in sorted(corpus.invalid):
        if (corpus.root / corpus.question_path(slug)).exists():
            problems.extend(raw_ref_problems(corpus, slug))
    problems.extend(todo_problems(corpus))
    for slug in answer_files:
        if slug not in corpus.questions and not (corpus.root / corpus.question_path(slug)).exists():
            problems.append(
                error(
                    corpus.answer_path(slug),
                    1,
                    1,
                    "answer-orphan",
                    f"no question {corpus.question_path(slug)} for this answer",
                )
            )
    for slug in verify_files:
        if slug not in corpus.questions and not (corpus.root / corpus.question_path(slug)).exists():
            problems.append(
                error(
                    corpus.verify_path(slug),
                    1,
                    1,
                    "verify-orphan",
                    f"no question {corpus.question_path(slug)} for this script",
                )
            )
    report.extend(problems)


def _load_catalog(
    root: Path, rel: str, key: str, model: type[M], report: Report, invalid: set[str], memo: Memo | None
) -> list[tuple[M, Pos, Located, int]]:
    """:func:`_load_list`, reused from ``memo`` while the file keeps its stamp (mtime ns, size, inode)."""
    if memo is None:
        return _load_list(root, rel, key, model, report, invalid)

    def fresh() -> tuple[list[tuple[M, Pos, Located, int]], Report, set[str]]:
        own, bad = Report(), set[str]()
        return _load_list(root, rel, key, model, own, bad), own, bad

    items, own, bad = kept_by_stamp(memo.loaded, rel, str(root / rel), fresh)
    report.extend(own.problems)
    report.files += own.files
    invalid |= bad
    return list(items)


def _load_question(path: Path, rel: str, memo: Memo | None) -> tuple[Question | None, Located | None, list[Problem]]:
    if memo is None:
        return load_model(path, rel, Question)
    found: tuple[Question | None, Located | None, list[Problem]] = kept_by_stamp(
        memo.loaded, rel, str(path), lambda: load_model(path, rel, Question)
    )
    return found[0], found[1], list(found[2])


def _read_answer(path: Path, slug: str, rel: str) -> tuple[Answer | None, list[Problem]]:
    text, problems = read_text(path, rel)
    if text is None:
        return None, problems
    answer, more = parse_answer(text, slug, rel)
    return answer, problems + more


def _load_answer(path: Path, slug: str, rel: str, memo: Memo | None) -> tuple[Answer | None, list[Problem]]:
    """An answer read and split into parts, kept in ``memo`` while its (mtime ns, size, inode) are unchanged."""
    if memo is None:
        return _read_answer(path, slug, rel)
    answer, problems = kept_by_stamp(memo.answers, rel, str(path), lambda: _read_answer(path, slug, rel))
    return answer, list(problems)


def load_corpus(root: Path, memo: Memo | None = None) -> tuple[Corpus, Report]:
    """Load and check the whole repository; the report holds every problem found.

    With a ``memo``, a question file unchanged since the last load (same mtime and size) is not parsed again.
    """
    corpus = Corpus(root=root)
    report = Report()
    for name, key, model in (
        ("topics", "topics", Topic),
        ("companies", "companies", Company),
        ("concepts", "concepts", Concept),
    ):
        rel = f"{CATALOG}/{name}.yaml"
        items: list[Any] = _load_catalog(root, rel, key, model, report, corpus.invalid, memo)
        if items:
            corpus.positions[rel] = items[0][2]
        target: dict[str, Any] = getattr(corpus, name)
        target.update(_unique(items, rel, key, report))

    question_files, problems = _content_files(root, QUESTIONS, ".yaml")
    report.extend(problems)
    answer_files, problems = _content_files(root, ANSWERS, ".md")
    report.extend(problems)
    verify_files, problems = _content_files(root, VERIFY, ".py")
    report.extend(problems)
    corpus.verify_scripts = verify_files

    for slug, path in question_files.items():
        rel = corpus.question_path(slug)
        report.files += 1
        question, located, problems = _load_question(path, rel, memo)
        report.extend(problems)
        if located is not None:
            corpus.positions[rel] = located
        if question is not None:
            corpus.questions[slug] = question
        else:
            corpus.invalid.add(slug)
    for slug, path in answer_files.items():
        rel = corpus.answer_path(slug)
        report.files += 1
        answer, problems = _load_answer(path, slug, rel, memo)
        report.extend(problems)
        if answer is not None:
            corpus.answers[slug] = answer
    report.files += len(verify_files)
    cross_check(corpus, report, answer_files, verify_files)
    return corpus, report
