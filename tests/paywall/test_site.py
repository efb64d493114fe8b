"""The paywall's mkdocs side refuses what it cannot publish safely."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from qbank.paywall import site

TOKEN = "0123456789abcdef0123456789abcdef"
PREMIUM = (
    f"<p>free</p><!--qbseal {TOKEN} open premium 0 48-->"
    f'<h2 id="h">H</h2><p>x</p><!--qbseal {TOKEN} close premium 0-->'
)


def config(tmp_path: Path, enabled: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "site_dir": str(tmp_path / "site"),
        "docs_dir": str(tmp_path / "docs"),
        "site_url": "https://example.org/sub/",
        "config_file_path": str(tmp_path / "mkdocs.yml"),
        "extra": {"paywall": {"enabled": enabled, **extra}},
    }


def page(url: str = "questions/a/") -> Any:
    return SimpleNamespace(url=url, file=SimpleNamespace(src_uri="questions/a.md"), toc=None)


def test_page_path_includes_the_site_prefix(tmp_path: Path) -> None:
    assert site.page_path(config(tmp_path), "questions/a/") == "/sub/questions/a/"
    assert site.page_path({"site_url": None}, "") == "/"


def test_scripts_in_content_are_refused(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    site.on_config(cfg)
    with pytest.raises(site.PaywallBuildError, match="script"):
        site.on_page_content("<p>x</p><script>alert(1)</script>", page(), cfg)


def test_premium_with_the_paywall_off_is_refused(tmp_path: Path) -> None:
    cfg = config(tmp_path, enabled=False)
    site.on_config(cfg)
    with pytest.raises(site.PaywallBuildError, match="disabled"):
        site.on_page_content(PREMIUM, page(), cfg, TOKEN)


def test_a_ledger_inside_the_site_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = tmp_path / "site" / "ledger.sqlite3"
    ledger.parent.mkdir(parents=True)
    ledger.write_bytes(b"not even opened")
    monkeypatch.setenv("QBANK_LEDGER", str(ledger))
    cfg = config(tmp_path)
    build = site.on_config(cfg)
    assert "x</p>" not in site.on_page_content(PREMIUM, page(), cfg, TOKEN)
    site.on_post_build(cfg)
    assert [p.code for p in build.problems] == ["paywall-ledger-published"]
    assert not (tmp_path / "site" / "assets").exists()
    assert site.take(Path(cfg["site_dir"])) is build


def test_a_bad_recipient_is_an_error_and_seals_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad.pub").write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    monkeypatch.setenv("QBANK_LEDGER", "")
    cfg = config(tmp_path, recipient="bad.pub")
    build = site.on_config(cfg)
    site.on_page_content(PREMIUM, page(), cfg, TOKEN)
    site.on_post_build(cfg)
    assert [(p.path, p.code) for p in build.problems] == [("bad.pub", "paywall-recipient")]
    assert not (tmp_path / ".qbank").exists()
    site.take(Path(cfg["site_dir"]))
