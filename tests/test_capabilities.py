"""The one rule for a missing capability: a failure under CI=true, a skip with the reason elsewhere."""

from __future__ import annotations

import pytest

from . import capabilities


@pytest.fixture
def no_setpriv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(capabilities.CHECKS, "setpriv", lambda: False)
    monkeypatch.setitem(capabilities.CHECKS, "root", lambda: True)


def test_missing_under_ci_fails(no_setpriv: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"needs util-linux setpriv \(CI=true"):
        capabilities.require("root", "setpriv")


def test_missing_elsewhere_skips_with_the_reason(no_setpriv: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^needs util-linux setpriv$"):
        capabilities.require("root", "setpriv")


def test_present_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setitem(capabilities.CHECKS, "netns", lambda: True)
    assert capabilities.require("netns") is None
    assert capabilities.missing("netns") == []


def test_a_module_level_skip_is_allowed(no_setpriv: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Browser test modules call require() at import; pytest refuses a module-level skip not marked as such."""
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        capabilities.require("setpriv")
    assert skipped.value.allow_module_level


@pytest.mark.parametrize("name", ["chromium", "playwright", "axe"])
def test_each_browser_capability_is_a_failure_under_ci(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(capabilities.CHECKS, name, lambda: False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"\(CI=true"):
        capabilities.require(name)
