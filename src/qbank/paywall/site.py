"""The paywall's side of an mkdocs build; ``hooks/qbank_hooks.py`` forwards mkdocs events here.

The build never reads the license ledger. It encrypts premium sections under a fresh release key,
writes the ciphertext, and seals that key to the deploy environment's X25519 public key
(``recipient.py``) into ``.qbank/release/<release_id>.sealed.json`` next to ``mkdocs.yml``, never under
``site/``. The deploy job (``qbank paywall keyslots``) unseals it and writes the keyslots from the ledger.

Settings live in ``mkdocs.yml`` under ``extra.paywall``: ``enabled``, ``buy_url``, ``recipient`` (the public
key file, relative to ``mkdocs.yml``; ``$QBANK_RELEASE_RECIPIENT`` overrides it, e.g. a pull request's
throwaway key). Without a recipient, premium sections are still encrypted and nobody can ever open
them: plaintext is never the fallback.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..atomic import write_atomic
from ..problems import Problem, error, warning
from .csp import SiteHashes, add_csp, content_scripts
from .encrypt import CiphertextFile, PremiumFragment, SealedPage, premium_regions, seal_page
from .recipient import ENV_RECIPIENT, SealError, load_public, seal
from .release import Release

BUILD_INFO = "qbank-build.json"
RELEASE_DIR = ".qbank/release"
RELEASE_META = "qbank-release"
_HEAD_END = re.compile(r"</head>", re.IGNORECASE)


class PaywallBuildError(RuntimeError):
    """A page the paywall refuses to publish (premium markup it cannot seal, scripts in content)."""


@dataclass
class PaywallBuild:
    """The state of one build: its release key, the ciphertext files and the plaintext for the scan."""

    enabled: bool
    release: Release
    base_path: str
    buy_url: str
    site_url: str
    recipient: Path | None
    today: dt.date
    files: list[CiphertextFile] = field(default_factory=list)
    fragments: list[PremiumFragment] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    sealed: Path | None = None


# Builds in progress, keyed by output folder: `qbank build` runs mkdocs in-process and collects the
# fragments here for the leak scan once mkdocs returns (hooks are loaded by path, so no other channel).
_ACTIVE: dict[str, PaywallBuild] = {}


def settings(config: Any) -> dict[str, Any]:
    """The ``extra.paywall`` mapping of an mkdocs config (empty when absent)."""
    extra = config.get("extra") or {}
    value = extra.get("paywall") or {}
    return dict(value) if isinstance(value, dict) else {}


def config_root(config: Any) -> Path:
    """The folder of ``mkdocs.yml``."""
    return Path(config["config_file_path"]).resolve().parent


def recipient_path(config: Any) -> Path | None:
    """The release recipient's public key file: ``$QBANK_RELEASE_RECIPIENT``, else ``extra.paywall.recipient``."""
    if os.environ.get(ENV_RECIPIENT):
        return Path(os.environ[ENV_RECIPIENT]).expanduser().resolve()
    configured = settings(config).get("recipient")
    return (config_root(config) / str(configured)).resolve() if configured else None


def sealed_release_path(root: Path, release_id: str) -> Path:
    """Where a build leaves its sealed release key (outside ``site/``)."""
    return root / RELEASE_DIR / f"{release_id}.sealed.json"


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
        site_url=str(config.get("site_url") or ""),
        recipient=recipient_path(config),
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


def sealed_content(html: str, src_uri: str, page_url: str, config: Any, token: str = "") -> SealedPage:
    """A page's content with its answer parts sanitized and its premium ones sealed; changes nothing else, so it
    may run in another process (``qbank.pagepool``). ``token`` is the build's region token
    (``Settings.seal_token``) the renderer marked the parts with."""
    build = current(config)
    try:
        if premium_regions(html, token) and not build.enabled:
            raise PaywallBuildError(f"{src_uri}: premium sections on a page while the paywall is disabled")
        sealed = seal_page(html, page_path(config, page_url), build.release, token, buy_url=build.buy_url)
    except ValueError as exc:
        raise PaywallBuildError(f"{src_uri}: {exc}") from exc
    if content_scripts(sealed.html):
        raise PaywallBuildError(f"{src_uri}: page content may not contain <script> (CSP forbids it)")
    return sealed


def take_sealed(sealed: SealedPage, page: Any, config: Any) -> str:
    """Keep a sealed page's ciphertext and plaintext (for the leak scan) in the build, and drop its premium
    sections' inner headings from the page's table of contents; returns the content to publish."""
    build = current(config)
    build.files.extend(sealed.files)
    build.fragments.extend(sealed.fragments)
    if sealed.hidden_ids and getattr(page, "toc", None) is not None:
        page.toc.items = _prune(list(page.toc.items), sealed.hidden_ids)
    return sealed.html


def on_page_content(html: str, page: Any, config: Any, token: str = "") -> str:
    """Sanitize the page's answer parts, seal its premium ones and drop their inner headings from the TOC."""
    return take_sealed(sealed_content(html, page.file.src_uri, page.url, config, token), page, config)


def on_post_page(output: str, config: Any = None, seen: SiteHashes | None = None, path: str = "") -> str:
    """Add the Content-Security-Policy to a finished page, and name the release its ciphertext belongs to; the
    page's inline hashes go to ``seen`` under ``path`` (its path in the site) for the site's header policy."""
    build = _ACTIVE.get(str(Path(config["site_dir"]).resolve())) if config is not None else None
    # only pages that open with the release say which it is (others stay byte-identical across releases)
    if build is not None and build.enabled and ('data-qb-file="' in output or "data-qb-unlock-count" in output):
        meta = f'<meta name="{RELEASE_META}" content="{build.release.release_id}">'
        output = _HEAD_END.sub(lambda m: meta + m.group(0), output, count=1)
    return add_csp(output, seen, path)


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name


def on_post_build(config: Any) -> None:
    """Write the ciphertext files, the build's public record, and the release key sealed to the recipient.

    No license ledger is read here: keyslots are written by the deploy job (``qbank paywall keyslots``).
    """
    build = current(config)
    site = Path(config["site_dir"])
    has_release = build.enabled and bool(build.fragments)
    named = os.environ.get("QBANK_LEDGER", "")
    if named and not named.startswith("s3://"):  # compared as a path only: the build never opens a ledger
        ledger = Path(named).expanduser().absolute()
        for inside in (site.resolve(), Path(config["docs_dir"]).resolve()):
            if ledger.is_relative_to(inside):
                build.problems.append(error("mkdocs.yml", 0, 0, "paywall-ledger-published",
                                            f"$QBANK_LEDGER names a file inside {inside.name}/: it would be published"))
                return
    info = {"format": 1, "site_url": build.site_url, "release": build.release.release_id if has_release else None}
    site.mkdir(parents=True, exist_ok=True)
    (site / BUILD_INFO).write_text(json.dumps(info, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    if not has_release:
        return
    for f in build.files:
        out = site / f.path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(f.content)
    root = config_root(config)
    if build.recipient is None or not build.recipient.exists():
        named = f" ({_shown(build.recipient, root)} does not exist)" if build.recipient else ""
        build.problems.append(
            warning("mkdocs.yml", 0, 0, "paywall-no-recipient",
                    f"no release recipient{named}: set extra.paywall.recipient or $QBANK_RELEASE_RECIPIENT; premium "
                    "sections are encrypted and no key will ever open this build")
        )
        return
    where = _shown(build.recipient, root)
    try:
        public = load_public(build.recipient.read_text("ascii"), where)
    except (OSError, UnicodeDecodeError) as exc:
        build.problems.append(
            error(where, 0, 0, "paywall-recipient", f"cannot read the recipient: {type(exc).__name__}")
        )
        return
    except SealError as exc:
        build.problems.append(error(where, 0, 0, "paywall-recipient", str(exc)))
        return
    sealed = seal(build.release.key, build.release.release_id, build.site_url, public)
    path = sealed_release_path(root, build.release.release_id)
    write_atomic(path, sealed.to_json(), 0o600)
    build.sealed = path
