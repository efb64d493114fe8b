"""The drill harness: the same code the browser runs in Pyodide and the sandbox runs for `qbank verify`."""

from __future__ import annotations

from qbank.practice.harness import run_suite

SOLUTION = "def add(a, b):\n    return a + b\n"
TESTS = "def test_small():\n    assert add(1, 2) == 3\n\ndef test_wrong():\n    assert add(2, 2) == 5, 'two and two'\n"


def test_results_per_test_in_file_order_with_the_failing_line() -> None:
    out = run_suite(SOLUTION, [("public_tests", TESTS)])
    assert [(r["name"], r["ok"]) for r in out] == [("test_small", True), ("test_wrong", False)]
    assert out[1]["message"] == "line 5: two and two"


def test_a_solution_that_does_not_load_fails_every_suite() -> None:
    out = run_suite("def add(a, b)\n", [("public_tests", TESTS), ("edge_tests", TESTS)])
    assert [(r["suite"], r["name"], r["ok"]) for r in out] == [
        ("public_tests", "<solution>", False), ("edge_tests", "<solution>", False)]
    assert out[0]["message"].startswith("SyntaxError")


def test_suites_do_not_share_state_and_exceptions_are_results() -> None:
    tests_a = "LEAK = 1\ndef test_raises():\n    raise KeyError('k')\n"
    tests_b = "def test_isolated():\n    assert 'LEAK' not in globals()\n"
    out = run_suite(SOLUTION, [("a", tests_a), ("b", tests_b)])
    assert [(r["name"], r["ok"]) for r in out] == [("test_raises", False), ("test_isolated", True)]
    assert out[0]["message"] == "KeyError: 'k'"
