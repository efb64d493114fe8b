"""The corpus checks at their edges: each problem with its exact position, code and message, written out here.

The case files (tests/cases/invalid) check codes at positions; these pin what they leave open: which files the
content walk refuses or skips, the fallback positions of a catalog's problems, the TODO warnings' columns, the
premium-summary count both ways, the worked-example check of every concept in a file, the loads kept in a
``Memo``, and that one problem never hides the items after it.
"""

from __future__ import annotations

from pathlib import Path

from qbank.corpus import _content_files, _suggestion, load_corpus, suggest
from qbank.memo import Memo
from qbank.problems import Level, Problem

Q = "questions/base-question.yaml"
A = "answers/base-question.md"
TOPICS = "questions/_catalog/topics.yaml"
CONCEPTS = "questions/_catalog/concepts.yaml"
SUMMARY = '  - "Free summary A of the base-question premium section, written for the test corpus."\n'
SUMMARY_B = '  - "Free summary B of the base-question premium section, written for the test corpus."\n'


def problems(root: Path, memo: Memo | None = None) -> set[tuple[str, int, int, str, str]]:
    _corpus, report = load_corpus(root, memo)
    return {(p.path, p.line, p.col, p.code, p.message) for p in report.problems}


def add_question(root: Path, slug: str, old: str = "", new: str = "") -> None:
    """A copy of the base question (with one replacement) and its answer and script."""
    text = (root / Q).read_text()
    (root / "questions" / f"{slug}.yaml").write_text(text.replace(old, new) if old else text)
    (root / "answers" / f"{slug}.md").write_text((root / A).read_text())
    (root / "verify" / f"{slug}.py").write_text((root / "verify" / "base-question.py").read_text())


def premium_blocks(n: int) -> str:
    return "Free text first.\n" + "".join(f"\n/// premium\n## Part {i}\n\nDetail {i}.\n///\n" for i in range(n))


# --- Corpus.topic_questions and suggest -------------------------------------------------------------------


def test_topic_questions_lists_only_that_topics_questions(tiny_repo: Path) -> None:
    # "kv-cache" sorts before "speculative-decoding": an ordering in place of equality takes the other's too
    add_question(tiny_repo, "spec-question", "topic: kv-cache", "topic: speculative-decoding")
    corpus, _report = load_corpus(tiny_repo)
    assert corpus.topic_questions("kv-cache") == ["base-question"]
    assert corpus.topic_questions("speculative-decoding") == ["spec-question"]
    assert corpus.topic_questions("no-such-topic") == []


def test_suggest_is_kept_by_its_inputs() -> None:
    """`qbank serve` asks for the same suggestion on every save: the second ask is answered from the cache."""
    _suggestion.cache_clear()
    assert suggest("kv-cach", ["kv-cache", "paged-attention"]) == " (did you mean 'kv-cache'?)"
    assert suggest("kv-cach", ["kv-cache", "paged-attention"]) == " (did you mean 'kv-cache'?)"
    info = _suggestion.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert suggest("zzz", ["kv-cache"]) == ""


# --- catalog files ----------------------------------------------------------------------------------------


def test_catalog_unknown_keys_before_and_after_its_list(tiny_repo: Path) -> None:
    # "aaa" sorts before "topics" and "zzz" after it: each is reported, at its key
    path = tiny_repo / TOPICS
    path.write_text("aaa: 1\n" + path.read_text() + "zzz: 2\n")
    assert problems(tiny_repo) == {
        (TOPICS, 1, 1, "field-unknown", "unknown field 'aaa'; expected only 'topics'"),
        (TOPICS, 15, 1, "field-unknown", "unknown field 'zzz'; expected only 'topics'"),
    }


def test_catalog_list_that_is_not_a_list_is_reported_at_its_value(tiny_repo: Path) -> None:
    (tiny_repo / TOPICS).write_text("# no topics yet\ntopics: 5\n")
    _corpus, report = load_corpus(tiny_repo)
    assert [p for p in report.problems if p.path == TOPICS] == [
        Problem(TOPICS, 2, 9, Level.ERROR, "field-type", "'topics' must be a list")
    ]


def test_catalog_without_its_list_is_reported_at_the_first_character(tiny_repo: Path) -> None:
    (tiny_repo / TOPICS).write_text("# a typo in the key\ntopic: []\n")
    _corpus, report = load_corpus(tiny_repo)
    assert [p for p in report.problems if p.path == TOPICS] == [
        Problem(TOPICS, 2, 1, Level.ERROR, "field-unknown", "unknown field 'topic'; expected only 'topics'"),
        Problem(TOPICS, 1, 1, Level.ERROR, "field-type", "'topics' must be a list"),
    ]


def test_catalog_items_that_are_not_mappings_are_problems_not_crashes(tiny_repo: Path) -> None:
    # a bare string and a mapping without a slug: neither may be read as having one
    path = tiny_repo / TOPICS
    path.write_text(path.read_text() + "  - just-text\n  - title: No slug\n")
    corpus, report = load_corpus(tiny_repo)
    missing = ("slug", "short_title", "description", "scope", "order")
    assert [(p.line, p.col, p.code, p.message) for p in report.problems] == [
        (14, 5, "field-type", "topics[2]: Input should be a valid dictionary or instance of Topic (got 'just-text')"),
        *[(15, 5, "field-missing", f"missing required field 'topics[3].{name}'") for name in missing],
    ]
    assert {p.path for p in report.problems} == {TOPICS}
    assert list(corpus.topics) == ["speculative-decoding", "kv-cache"]
    assert corpus.invalid == set()


def test_duplicate_catalog_slug_is_named_and_the_items_after_it_still_load(tiny_repo: Path) -> None:
    path = tiny_repo / TOPICS
    lines = path.read_text().splitlines(keepends=True)
    # speculative-decoding twice, then kv-cache: the item after the duplicate is still a topic
    path.write_text("".join(lines[:7] + lines[1:7] + lines[7:]))
    corpus, _report = load_corpus(tiny_repo)
    assert problems(tiny_repo) == {
        (TOPICS, 8, 11, "duplicate-slug", "topic 'speculative-decoding' is defined twice"),
    }
    assert list(corpus.topics) == ["speculative-decoding", "kv-cache"]


# --- the content walk ----------------------------------------------------------------------------------------


def test_content_walk_refuses_and_skips_by_folder_and_extension(tiny_repo: Path) -> None:
    """questions/ refuses every other extension; answers/ and verify/ refuse only the near misses (.yml,
    .markdown, .ipynb) and skip the rest (notes, images). A refused file hides no file after it."""
    for rel in (
        "questions/Bad.yaml",  # sorts first (capital): a bad name
        "questions/a-first.yml",  # sorts before base-question.yaml
        "questions/notes.json",
        "answers/extra.html",  # ".html" sorts before ".md"
        "answers/extra.txt",
        "answers/notes.markdown",
        "answers/notebook.ipynb",
        "verify/notes.txt",
        "verify/scratch.ipynb",
        "verify/old.yml",
    ):
        (tiny_repo / rel).write_text("x\n")
    corpus, report = load_corpus(tiny_repo)
    assert {(p.path, p.line, p.col, p.code, p.message) for p in report.problems} == {
        (
            "questions/Bad.yaml",
            0,
            0,
            "bad-slug",
            "file name: 'Bad' is not a valid slug: use lowercase letters, digits and single hyphens "
            "(at most 80 characters)",
        ),
        ("questions/a-first.yml", 0, 0, "file-extension", "files in questions/ must end in .yaml"),
        ("questions/notes.json", 0, 0, "file-extension", "files in questions/ must end in .yaml"),
        ("answers/notes.markdown", 0, 0, "file-extension", "files in answers/ must end in .md"),
        ("answers/notebook.ipynb", 0, 0, "file-extension", "files in answers/ must end in .md"),
        ("verify/scratch.ipynb", 0, 0, "file-extension", "files in verify/ must end in .py"),
        ("verify/old.yml", 0, 0, "file-extension", "files in verify/ must end in .py"),
    }
    assert list(corpus.questions) == ["base-question"]
    assert list(corpus.answers) == ["base-question"]
    assert list(corpus.verify_scripts) == ["base-question"]


def test_content_walk_compares_the_folder_by_value(tmp_path: Path) -> None:
    # a folder name built at run time is equal to "questions", not the same object
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / "notes.json").write_text("x\n")
    folder = "".join(["quest", "ions"])
    found, refused = _content_files(tmp_path, folder, ".yaml")
    assert found == {}
    assert [(p.path, p.code) for p in refused] == [("questions/notes.json", "file-extension")]


# --- TODO warnings ---------------------------------------------------------------------------------------------


def test_todo_warnings_name_each_field_and_the_answers_line_and_column(tiny_repo: Path) -> None:
    q = tiny_repo / Q
    text = q.read_text()
    for old, new in (
        ("How big is", "TODO How big is"),
        ('"Test question base-question"', '"Test question TODO"'),
        ("The base-question test question", "The TODO test question"),
        ("Work it out for a real model.", "Work it out for a real model. TODO"),
        ("Free summary A of", "TODO Free summary A of"),
    ):
        assert old in text
        text = text.replace(old, new)
    q.write_text(text)
    a = tiny_repo / A
    a.write_text(a.read_text().replace("Multiply it out.", "Multiply it out. TODO: the units"))
    _corpus, report = load_corpus(tiny_repo)
    assert sorted((p.path, p.line, p.col, p.level, p.message) for p in report.problems) == [
        (A, 6, 18, Level.WARNING, "the answer still holds a TODO"),
        (Q, 2, 8, Level.WARNING, "title still holds a TODO"),
        (Q, 3, 9, Level.WARNING, "teaser still holds a TODO"),
        (Q, 13, 14, Level.WARNING, "short_title still holds a TODO"),
        (Q, 14, 14, Level.WARNING, "description still holds a TODO"),
        (Q, 16, 5, Level.WARNING, "a premium summary still holds a TODO"),
    ]


# --- a question that failed validation --------------------------------------------------------------------------


def test_raw_references_sorting_either_side_of_the_slug_are_all_checked(tiny_repo: Path) -> None:
    add_question(tiny_repo, "middle", "editorial_rank: 990", "editorial_rank: lots")
    q = tiny_repo / "questions" / "middle.yaml"
    q.write_text(q.read_text().replace("concepts: [kv-cache]", "concepts: [aaa-unknown, zzz-unknown]"))
    assert problems(tiny_repo) == {
        ("questions/middle.yaml", 9, 17, "field-type", "editorial_rank: Input should be a valid integer (got 'lots')"),
        ("questions/middle.yaml", 12, 12, "unknown-concept", "unknown concept 'aaa-unknown'"),
        ("questions/middle.yaml", 12, 25, "unknown-concept", "unknown concept 'zzz-unknown'"),
    }


# --- cross-checks of valid questions ----------------------------------------------------------------------------


def test_a_related_question_sorting_before_the_slug_is_not_itself(tiny_repo: Path) -> None:
    add_question(tiny_repo, "a-question")
    q = tiny_repo / Q
    q.write_text(q.read_text() + "related: [a-question]\n")
    assert problems(tiny_repo) == set()


def test_worked_examples_of_every_concept_in_the_file(tiny_repo: Path) -> None:
    """A concept without an example or explanation is passed over; the concepts after it are still checked,
    each problem at its own concept's entry."""
    entry = (
        "  - slug: {slug}\n"
        "    title: {slug}\n"
        '    short_title: "Test concept {slug}"\n'
        '    description: "The {slug} concept entry of the qbank test corpus, with a description long enough."\n'
        "    summary: One sentence.\n"
    )
    (tiny_repo / CONCEPTS).write_text(
        "concepts:\n"
        + entry.format(slug="kv-cache")
        + "    explanation: The cache grows with every token.\n    worked_example: base-question\n"
        + entry.format(slug="attention")
        + entry.format(slug="paged-attention")
        + "    explanation: Pages of the cache.\n    worked_example: base-questio\n"
    )
    assert problems(tiny_repo) == {
        (
            CONCEPTS,
            20,
            21,
            "unknown-worked-example",
            "unknown question 'base-questio' (did you mean 'base-question'?)",
        ),
    }


def test_premium_summaries_fewer_than_sections(tiny_repo: Path) -> None:
    (tiny_repo / A).write_text(premium_blocks(2))
    assert problems(tiny_repo) == {
        (
            Q,
            15,
            1,
            "premium-summary-count",
            f"{A} has 2 premium section(s) and premium_summaries 1: give one free line per section, in order",
        ),
    }


def test_premium_summaries_more_than_sections(tiny_repo: Path) -> None:
    q = tiny_repo / Q
    q.write_text(q.read_text() + SUMMARY_B)
    (tiny_repo / A).write_text(premium_blocks(1))
    assert problems(tiny_repo) == {
        (
            Q,
            15,
            1,
            "premium-summary-count",
            f"{A} has 1 premium section(s) and premium_summaries 2: give one free line per section, in order",
        ),
    }


def test_premium_summaries_missing_is_reported_at_the_first_character(tiny_repo: Path) -> None:
    q = tiny_repo / Q
    q.write_text(q.read_text().replace("premium_summaries:\n" + SUMMARY, ""))
    assert problems(tiny_repo) == {
        (
            Q,
            1,
            1,
            "premium-summary-count",
            f"{A} has 1 premium section(s) and premium_summaries 0: give one free line per section, in order",
        ),
    }


def test_premium_summaries_match_past_the_small_int_cache(tiny_repo: Path) -> None:
    # 300 sections and 300 summaries: two equal counts above 256 are equal without being one object
    q = tiny_repo / Q
    summaries = "".join(
        f'  - "Free summary {i} of the base-question premium section, for the corpus."\n' for i in range(300)
    )
    q.write_text(q.read_text().replace(SUMMARY, summaries))
    (tiny_repo / A).write_text(premium_blocks(300))
    assert problems(tiny_repo) == set()


def test_premium_in_a_free_question_is_reported_at_the_first_block(tiny_repo: Path) -> None:
    q = tiny_repo / Q
    q.write_text(q.read_text().replace("access: premium", "access: free").replace("premium_summaries:\n" + SUMMARY, ""))
    (tiny_repo / A).write_text(premium_blocks(2))
    assert problems(tiny_repo) == {
        (A, 3, 1, "premium-in-free", f"{Q} is free, so its answer cannot have premium blocks"),
    }


# --- loads kept in a Memo ---------------------------------------------------------------------------------------


def test_a_memo_gives_the_same_corpus_and_report_as_a_fresh_load(tiny_repo: Path) -> None:
    add_question(tiny_repo, "broken", "editorial_rank: 990", "editorial_rank: lots")
    a = tiny_repo / A
    a.write_text(a.read_text().replace("Multiply it out.", "Multiply it out. TODO"))
    fresh, fresh_report = load_corpus(tiny_repo)
    expected = [
        (A, 6, 18, "todo"),
        ("questions/broken.yaml", 9, 17, "field-type"),
    ]
    assert sorted((p.path, p.line, p.col, p.code) for p in fresh_report.problems) == expected
    memo = Memo()
    for _ in range(2):  # the first load fills the memo, the second is answered from it
        corpus, report = load_corpus(tiny_repo, memo)
        assert sorted((p.path, p.line, p.col, p.code) for p in report.problems) == expected
        assert report.files == fresh_report.files == 9  # 3 catalogs, 2 questions, 2 answers, 2 scripts
        assert corpus.questions == fresh.questions
        assert list(corpus.questions) == ["base-question"]
        assert corpus.invalid == {"broken"}
        assert corpus.positions.keys() == fresh.positions.keys()
        assert corpus.positions[Q].value_pos(("topic",)) == fresh.positions[Q].value_pos(("topic",))
        assert list(corpus.topics) == ["speculative-decoding", "kv-cache"]
    assert set(memo.loaded) == {TOPICS, "questions/_catalog/companies.yaml", CONCEPTS, Q, "questions/broken.yaml"}
