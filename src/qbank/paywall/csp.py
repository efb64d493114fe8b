"""The Content-Security-Policy of the site, in one place: scripts only from the site itself or by exact hash.

The theme's few inline scripts are allowed by their SHA-256, computed from each built page, so a
script injected into content (which :func:`content_scripts` refuses at build time anyway) cannot run
and cannot read the license key-encryption key kept on the device. Each page carries its own policy
in a ``<meta>`` element first thing in ``<head>`` (:func:`add_csp`), so the site is protected on any
host. Hosts that send headers get :func:`site_policy` too (``_headers``, written by
``qbank.deploy.headers``): the same directives with every page's hashes, plus ``frame-ancestors``,
which a meta element cannot set. A browser enforces both, so a page runs only what each allows.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

SCRIPT_RE = re.compile(r"<script\b(?P<attrs>[^>]*)>(?P<body>.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
STYLE_RE = re.compile(r"<style\b[^>]*>(?P<body>.*?)</style\s*>", re.IGNORECASE | re.DOTALL)
HEAD_RE = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
CHARSET_RE = re.compile(r"<meta\s+charset=[^>]*>", re.IGNORECASE)
TYPE_RE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
JS_TYPES = {"", "text/javascript", "module", "application/javascript"}


def _sha(body: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"


def inline_hashes(page: str) -> tuple[list[str], list[str]]:
    """Hash sources of the page's inline scripts (data blocks such as JSON are not scripts) and styles."""
    scripts = []
    for m in SCRIPT_RE.finditer(page):
        if re.search(r"\bsrc\s*=", m.group("attrs"), re.IGNORECASE):
            continue
        t = TYPE_RE.search(m.group("attrs"))
        if (t.group(1).lower() if t else "") in JS_TYPES:
            scripts.append(_sha(m.group("body")))
    styles = [_sha(m.group("body")) for m in STYLE_RE.finditer(page)]
    return sorted(set(scripts)), sorted(set(styles))


def policy(script_hashes: list[str], style_hashes: list[str]) -> str:
    """The policy for a page with these inline scripts and styles."""
    return "; ".join(
        [
            "default-src 'self'",
            # WebAssembly compilation only (Pagefind's search runs as WASM), never `eval` of JavaScript
            "script-src " + " ".join(["'self'", "'wasm-unsafe-eval'", *script_hashes]),
            "style-src " + " ".join(["'self'", *style_hashes]),
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "worker-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
        ]
    )


def header_policy(meta_policy: str) -> str:
    """The same policy for an HTTP header, where ``frame-ancestors`` is honoured."""
    return meta_policy + "; frame-ancestors 'none'"


@dataclass
class SiteHashes:
    """The inline hashes of the pages :func:`add_csp` has given a policy, and those pages' site paths: the
    build gathers them as it writes each page, so the header policy needs no second read of those pages."""

    pages: set[str] = field(default_factory=set)
    scripts: set[str] = field(default_factory=set)
    styles: set[str] = field(default_factory=set)


def site_policy(pages: Iterable[str], seen: SiteHashes | None = None) -> str:
    """The header policy of a whole site: every page's inline script and style hashes (those in ``seen`` and
    those of ``pages``), and ``frame-ancestors``."""
    scripts: set[str] = set(seen.scripts) if seen is not None else set()
    styles: set[str] = set(seen.styles) if seen is not None else set()
    for page in pages:
        page_scripts, page_styles = inline_hashes(page)
        scripts.update(page_scripts)
        styles.update(page_styles)
    return header_policy(policy(sorted(scripts), sorted(styles)))


def content_scripts(content_html: str) -> int:
    """How many ``<script>`` elements a page's content has (content may have none)."""
    return len(re.findall(r"<script\b", content_html, re.IGNORECASE))


def add_csp(page: str, seen: SiteHashes | None = None, path: str = "") -> str:
    """The page with its Content-Security-Policy ``<meta>`` inserted first in ``<head>``; its hashes are added to
    ``seen`` under ``path`` (the page's path in the site), when given."""
    m = HEAD_RE.search(page)
    if m is None:
        return page
    charset = CHARSET_RE.search(page, m.end())
    first_script = page.find("<script", m.end())
    if charset and (first_script < 0 or charset.start() < first_script):
        m = charset  # the charset declaration stays first, the policy still precedes every script
    scripts, styles = inline_hashes(page)
    if seen is not None:
        seen.pages.add(path)
        seen.scripts.update(scripts)
        seen.styles.update(styles)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(scripts, styles)}">'
    return page[: m.end()] + meta + page[m.end() :]
