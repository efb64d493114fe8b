"""The mutation report: outcomes, listed equivalents (and stale ones), scores, from a session in cosmic-ray's shape."""

from __future__ import annotations

import json
import sqlite3
import tomllib
from pathlib import Path

from mutation.report import ModuleScore, as_json, markdown, read_session, stale_equivalents
from mutation.run import CONFIG, ROOT, session_config

SOURCE = ["def over(a, b):", "    return a > b", "", "def twice(x):", "    return x + x"]
EQUIVALENT = {"path": "m.py", "operator": "core/Swap", "line": "return x + x", "reason": "x * 2 is x + x"}
SKIP = {"operators": "core/ReplaceBinaryOperator_\\w+_Pow$", "reason": "power of a float"}


def session(tmp_path: Path, rows: list[tuple[str, int, str | None, str | None]]) -> Path:
    """A session file with cosmic-ray 8.7's tables (outcomes as it stores them, by enum name): (operator, line,
    worker outcome, test outcome) per mutant."""
    path = tmp_path / "s.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE mutation_specs (module_path VARCHAR, operator_name VARCHAR, operator_args JSON, occurrence"
        " INTEGER, start_pos_row INTEGER, start_pos_col INTEGER, end_pos_row INTEGER, end_pos_col INTEGER,"
        " definition_name VARCHAR, job_id VARCHAR NOT NULL PRIMARY KEY)"
    )
    conn.execute(
        "CREATE TABLE work_results (worker_outcome VARCHAR(9), output TEXT, test_outcome VARCHAR(11), diff TEXT,"
        " job_id VARCHAR NOT NULL PRIMARY KEY)"
    )
    for i, (op, line, worker, test) in enumerate(rows):
        conn.execute(
            "INSERT INTO mutation_specs VALUES ('m.py', ?, '{}', 0, ?, 4, ?, 5, NULL, ?)",
            (op.removesuffix("#timeout"), line, line, i),
        )
        if worker is not None:
            output = "timeout" if op.endswith("#timeout") else ""  # what cosmic-ray writes for a timeout
            conn.execute("INSERT INTO work_results VALUES (?, ?, ?, '-a\n+b', ?)", (worker, output, test, i))
    conn.commit()
    conn.close()
    return path


def test_outcomes_scores_and_equivalents(tmp_path: Path) -> None:
    s = session(
        tmp_path,
        [
            ("core/ReplaceComparisonOperator_Gt_GtE", 2, "NORMAL", "SURVIVED"),  # a missing test
            ("core/ReplaceComparisonOperator_Gt_Lt", 2, "NORMAL", "KILLED"),
            ("core/NumberReplacer", 2, "NORMAL", "INCOMPETENT"),  # the mutant crashed the tests: killed
            ("core/Swap", 5, "NORMAL", "SURVIVED"),  # listed as equivalent
            ("core/ReplaceBinaryOperator_Add_Pow", 5, "SKIPPED", None),
            ("core/AddNot", 2, "EXCEPTION", None),  # could not be applied
            ("core/AddNot", 5, None, None),  # not run yet (an interrupted session)
        ],
    )
    mutants = read_session(s, "m.py", SOURCE, [EQUIVALENT], [SKIP])
    assert [(m.line, m.operator.removeprefix("core/"), m.outcome) for m in mutants] == [
        (2, "AddNot", "error"),
        (2, "NumberReplacer", "killed"),
        (2, "ReplaceComparisonOperator_Gt_GtE", "survived"),
        (2, "ReplaceComparisonOperator_Gt_Lt", "killed"),
        (5, "AddNot", "pending"),
        (5, "ReplaceBinaryOperator_Add_Pow", "skipped"),
        (5, "Swap", "equivalent"),
    ]
    assert {m.operator: m.reason for m in mutants if m.reason} == {
        "core/Swap": "x * 2 is x + x",
        "core/ReplaceBinaryOperator_Add_Pow": "power of a float",
    }
    score = ModuleScore("m", "m.py", 12.0, mutants)
    assert score.score == 2 / 3  # killed / (killed + survived): equivalent, skipped, errors and pending are out
    assert stale_equivalents([score], [EQUIVALENT]) == []
    report = markdown([score], [], "cosmic-ray 8.7.0")
    assert "| m.py | 7 | 2 | 1 | 1 | 1 | 1 | 1 | 66.7% | 12 |" in report
    assert "## Surviving mutants (1)" in report and "`m.py:2:4` core/ReplaceComparisonOperator_Gt_GtE" in report
    assert "## Equivalent mutants (1)" in report and "x * 2 is x + x" in report
    doc = json.loads(as_json([score], []))
    assert doc["modules"][0]["counts"] == {
        "killed": 2,
        "survived": 1,
        "equivalent": 1,
        "skipped": 1,
        "error": 1,
        "pending": 1,
    }


def test_an_equivalent_that_no_longer_survives_is_stale(tmp_path: Path) -> None:
    s = session(tmp_path, [("core/Swap", 5, "NORMAL", "KILLED")])
    score = ModuleScore("m", "m.py", 1.0, read_session(s, "m.py", SOURCE, [EQUIVALENT], []))
    assert stale_equivalents([score], [EQUIVALENT]) == ["m.py: core/Swap on `return x + x`"]
    assert "## Stale equivalents (1)" in markdown([score], stale_equivalents([score], [EQUIVALENT]), "t")


def test_the_configuration_names_real_modules_and_tests() -> None:
    with CONFIG.open("rb") as fh:
        config = tomllib.load(fh)
    names = [m["name"] for m in config["module"]]
    assert len(names) == len(set(names))
    for m in config["module"]:
        assert (ROOT / m["path"]).is_file(), m["path"]
        assert m["tests"] and all((ROOT / t).is_file() for t in m["tests"]), m["name"]
    for eq in config.get("equivalent", []):
        assert eq["reason"].strip() and eq["line"].strip() in (ROOT / eq["path"]).read_text(), eq
    # every trust-critical area the issue names is configured
    paths = {m["path"] for m in config["module"]}
    for area in (
        "src/qbank/paywall/",
        "src/qbank/verify/sandbox/",
        "src/qbank/verify/runner.py",
        "src/qbank/claims/match.py",
        "src/qbank/claims/bind.py",
        "src/qbank/corpus.py",
        "src/qbank/render/text.py",
        "src/qbank/deploy/plan.py",
    ):
        assert any(p.startswith(area) for p in paths), area
    for folder in ("paywall", "verify/sandbox"):  # every module of these, not only some
        for py in (ROOT / "src" / "qbank" / folder).rglob("*.py"):
            if py.name != "__init__.py":
                assert py.relative_to(ROOT).as_posix() in paths, py
    cfg = tomllib.loads(session_config(config["module"][0], config["run"], 20.0))["cosmic-ray"]
    assert cfg["module-path"] == config["module"][0]["path"] and cfg["timeout"] == 20.0
    assert cfg["test-command"].endswith(" ".join(config["module"][0]["tests"]))


def test_annotations_python_never_evaluates() -> None:
    from mutation.report import annotation_spans, in_spans

    body = "def f(a: int | None, *, b: str | None = None) -> int | None:\n    c: int | None = a\n    return c | 1\n"
    postponed = annotation_spans("from __future__ import annotations\n" + body)
    # parameters, return and the local annotation; never the `|` that computes a value
    assert [in_spans(2, col, postponed) for col in (13, 31, 50)] == [True, True, True]
    assert in_spans(3, 11, postponed) and not in_spans(4, 13, postponed)
    evaluated = annotation_spans(body)  # without the future import a signature is evaluated at `def`
    assert not in_spans(1, 13, evaluated) and in_spans(2, 11, evaluated)


def test_an_equivalent_can_name_one_of_several_mutants_at_a_place(tmp_path: Path) -> None:
    """n-1 replaced by n-0 and by n-2 is one operator at one column: the entry names the one that is equivalent."""
    source = ["def last(xs):", "    return xs[len(xs) - 1]"]
    eq = {
        "path": "m.py",
        "operator": "core/NumberReplacer",
        "line": "return xs[len(xs) - 1]",
        "col": 4,
        "mutated": "len(xs) - 0",
        "reason": "r",
    }
    s = session(
        tmp_path, [("core/NumberReplacer", 2, "NORMAL", "SURVIVED"), ("core/NumberReplacer", 2, "NORMAL", "SURVIVED")]
    )
    conn = sqlite3.connect(s)
    conn.execute(
        "UPDATE work_results SET diff = ? WHERE job_id = '0'",
        ("-    return xs[len(xs) - 1]\n+    return xs[len(xs) - 0]",),
    )
    conn.execute(
        "UPDATE work_results SET diff = ? WHERE job_id = '1'",
        ("-    return xs[len(xs) - 1]\n+    return xs[len(xs) - 2]",),
    )
    conn.commit()
    conn.close()
    assert [m.outcome for m in read_session(s, "m.py", source, [eq], [])] == ["equivalent", "survived"]


def test_a_mutant_killed_by_a_timeout_is_killed_and_listed_as_such(tmp_path: Path) -> None:
    s = session(
        tmp_path,
        [
            ("core/ReplaceComparisonOperator_Gt_Lt#timeout", 2, "NORMAL", "KILLED"),  # its tests ran past the timeout
            ("core/ReplaceComparisonOperator_Gt_GtE", 2, "NORMAL", "KILLED"),  # a test failed
        ],
    )
    mutants = read_session(s, "m.py", SOURCE, [], [])
    assert [(m.operator, m.outcome, m.timeout) for m in mutants] == [
        ("core/ReplaceComparisonOperator_Gt_GtE", "killed", False),
        ("core/ReplaceComparisonOperator_Gt_Lt", "killed", True),
    ]
    score = ModuleScore("m", "m.py", 1.0, mutants)
    report = markdown([score], [], "cosmic-ray 8.7.0")
    assert "## Killed by a timeout (1)" in report
    assert (
        "- `m.py:2:4` core/ReplaceComparisonOperator_Gt_Lt: `return a > b`" in report.split("## Killed by a timeout")[1]
    )
    assert json.loads(as_json([score], []))["modules"][0]["killed_by_timeout"] == 1
