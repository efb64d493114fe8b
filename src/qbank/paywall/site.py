"""The paywall's side of an mkdocs build; ``hooks/qbank_hooks.py`` forwards mkdocs events here.

Settings live in ``mkdocs.yml`` under ``extra.paywall`` (``enabled``, ``ledger``, ``buy_url``);
``$QBANK_LEDGER`` overrides the ledger path. Without a ledger, premium sections are still encrypted
and simply nobody can open them: plaintext is never the fallback.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..problems import Problem, error, warning
from .csp import add_csp, content_scripts
from .encrypt import CiphertextFile, PremiumFragment, premium_regions, seal_page
from .ledger import default_ledger_path, open_ledger
from .release import Release
from .slots import keyslot_files


class PaywallBuildError(RuntimeError):
    """A page the paywall refuses to publish (premium markup it cannot seal, scripts in content)."""


@dataclass
class PaywallBuild:
    """The state of one build: its release key, the ciphertext files and the plaintext for the scan."""

    enabled: bool
    release: Release
    base_path: str
    buy_url: str
    ledger_path: Path
    today: dt.date
    files: list[CiphertextFile] = field(default_factory=list)
    fragments: list[PremiumFragment] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    slots: int = 0


# Builds in progress, keyed by output folder: `qbank build` runs mkdocs in-process and collects the
# fragments here for the leak scan once mkdocs returns (hooks are loaded by path, so no other channel).
_ACTIVE: dict[str, PaywallBuild] = {}


def settings(config: Any) -> dict[str, Any]:
    """The ``extra.paywall`` mapping of an mkdocs config (empty when absent)."""
    extra = config.get("extra") or {}
    value = extra.get("paywall") or {}
    return dict(value) if isinstance(value, dict) else {}


def ledger_path(config: Any) -> Path:
    """Where the build reads licenses: ``$QBANK_LEDGER``, else ``extra.paywall.ledger``, else the default."""
    if os.environ.get("QBANK_LEDGER"):
        return Path(os.environ["QBANK_LEDGER"]).expanduser()
    configured = settings(config).get("ledger")
    return Path(str(configured)).expanduser() if configured else default_ledger_path()


def page_path(config: Any, page_url: str) -> str:
    """A page's URL path on the deployed site: the path of ``site_url`` joined with the page's URL."""
    base = urlparse(config.get("site_url") or "/").path or "/"
    return base.rstrip("/") + "/" + page_url.lstrip("/")


def on_config(config: Any, today: dt.date | None = None) -> PaywallBuild:
    """Start a build: a fresh release key, registered under the build's output folder."""
    s = settings(config)
    base = urlparse(config.get("site_url") or "/").path or "/"
    build = PaywallBuild(
        enabled=bool(s.get("enabled", False)),
        release=Release.new(),
        base_path=base,
        buy_url=str(s.get("buy_url") or base.rstrip("/") + "/pricing/"),
        ledger_path=ledger_path(config),
        today=today or dt.date.today(),
    )
    _ACTIVE[str(Path(config["site_dir"]).resolve())] = build
    return build


def current(config: Any) -> PaywallBuild:
    """The build started for this config's output folder (one is started if none was)."""
    return _ACTIVE.get(str(Path(config["site_dir"]).resolve())) or on_config(config)


def take(site_dir: Path) -> PaywallBuild | None:
    """Hand the finished build's state to the caller (``qbank build``) and forget it here."""
    return _ACTIVE.pop(str(site_dir.resolve()), None)


def _prune(items: list[Any], hidden: set[str]) -> list[Any]:
    kept = []
    for item in items:
        if item.id in hidden:
            continue
        item.children = _prune(list(item.children), hidden)
        kept.append(item)
    return kept


def on_page_content(html: str, page: Any, config: Any, token: str = "") -> str:
    """Sanitize the page's answer parts, seal its premium ones and drop their inner headings from the TOC.

    ``token`` is the build's region token (``Settings.seal_token``) the renderer marked the parts with.
    """
    build = current(config)
    try:
        if premium_regions(html, token) and not build.enabled:
            raise PaywallBuildError(f"{page.file.src_uri}: premium sections on a page while the paywall is disabled")
        sealed = seal_page(html, page_path(config, page.url), build.release, token, buy_url=build.buy_url)
    except ValueError as exc:
        raise PaywallBuildError(f"{page.file.src_uri}: {exc}") from exc
    if content_scripts(sealed.html):
        raise PaywallBuildError(f"{page.file.src_uri}: page content may not contain <script> (CSP forbids it)")
    build.files.extend(sealed.files)
    build.fragments.extend(sealed.fragments)
    if sealed.hidden_ids and getattr(page, "toc", None) is not None:
        page.toc.items = _prune(list(page.toc.items), sealed.hidden_ids)
    return sealed.html


def on_post_page(output: str) -> str:
    """Add the Content-Security-Policy to a finished page."""
    return add_csp(output)


def on_post_build(config: Any) -> None:
    """Write the ciphertext files and the keyslots of every license that may read this release."""
    build = current(config)
    site = Path(config["site_dir"])
    if not build.enabled or not build.fragments:
        return
    files = {f.path: f.content for f in build.files}
    ledger = build.ledger_path.resolve()
    for inside in (site.resolve(), Path(config["docs_dir"]).resolve()):
        if ledger.is_relative_to(inside):
            build.problems.append(
                error("mkdocs.yml", 0, 0, "paywall-ledger-published", f"the ledger {ledger} would be published")
            )
            return
    if ledger.exists():
        with open_ledger(ledger, create=False) as book:
            active, ended = book.for_build(build.today)
    else:
        active, ended = [], []
        build.problems.append(
            warning(
                "mkdocs.yml",
                0,
                0,
                "paywall-no-ledger",
                f"no license ledger at {ledger}: premium sections are encrypted and no key can open them",
            )
        )
    build.slots = len(active)
    files.update(keyslot_files(build.release, active, ended))
    for rel, content in files.items():
        out = site / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(content)
