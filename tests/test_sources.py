"""The loader only ever returns data or positioned problems, whatever bytes it is fed."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qbank.corpus import load_corpus
from qbank.model import Question
from qbank.problems import Problem
from qbank.sources import MAX_BYTES, load_model, load_yaml, read_text

yaml_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30))
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)
question_keys = st.sampled_from([*Question.model_fields, "auther", "Title", ""])


def assert_positioned(problems: list[Problem], rel: str) -> None:
    assert problems
    for p in problems:
        assert p.path == rel and p.line >= 0 and p.col >= 0 and p.code and p.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=400))
def test_random_bytes_give_data_or_problems(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_bytes(raw)
    question, _located, problems = load_model(path, "questions/q.yaml", Question)
    if question is None:
        assert_positioned(problems, "questions/q.yaml")
    else:
        assert problems == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.dictionaries(question_keys, yaml_values, max_size=12) | yaml_values)
def test_random_yaml_documents_give_data_or_problems(doc: object, tmp_path: Path) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True)
    path = tmp_path / "q.yaml"
    path.write_text(text, encoding="utf-8")
    question, _located, problems = load_model(path, "questions/q.yaml", Question)
    assert (question is None) == bool(problems)
    if question is None:
        assert_positioned(problems, "questions/q.yaml")


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab: -[]{}\n\t#&*!|>'\"%@`,?")), max_size=120))
def test_yaml_syntax_soup(text: str) -> None:
    located, problems = load_yaml(text, "questions/q.yaml")
    assert (located is None) == bool(problems)
    if located is not None:
        assert isinstance(located.data, dict)


def test_fifty_megabyte_file_is_refused_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    text, problems = read_text(path, "questions/huge.yaml")
    assert text is None
    assert [(p.code, p.line, p.col) for p in problems] == [("file-too-large", 0, 0)]
    assert f"{MAX_BYTES:,}" in problems[0].message


def test_fifty_megabyte_question_in_a_corpus(tiny_repo: Path) -> None:
    path = tiny_repo / "questions" / "base-question.yaml"
    with path.open("ab") as fh:
        fh.write(b"# " + b"x" * (50 * 1024 * 1024) + b"\n")
    _corpus, report = load_corpus(tiny_repo)
    assert [(p.path, p.code) for p in report.problems] == [("questions/base-question.yaml", "file-too-large")]


def test_deep_pydantic_error_points_at_nested_value() -> None:
    text = "title: t\nverify:\n  timeout: 0\n"
    located, problems = load_yaml(text, "q.yaml")
    assert located is not None and not problems
    assert located.value_pos(("verify", "timeout")) == located.values[("verify", "timeout")]
    assert (located.values[("verify", "timeout")].line, located.values[("verify", "timeout")].col) == (3, 12)


def test_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_bytes(b"\xef\xbb\xbftitle: x\n")
    text, problems = read_text(path, "q.yaml")
    assert text == "title: x\n" and problems == []
