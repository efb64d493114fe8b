"""What each file of the built site is served with: content type, encoding, cache policy, security headers.

One source of truth for three consumers: the S3 uploader (object metadata), the host files that
Cloudflare Pages and Netlify read (``_headers``, ``_redirects``), and ``qbank serve --built``.
"""

from __future__ import annotations

import mimetypes
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..paywall.csp import SiteHashes, header_policy, policy, site_policy

# The paywall's policy (`qbank.paywall.csp`), as a header: no third-party origin anywhere (fonts are
# self-hosted, ciphertext, keyslots and the search index are same-origin fetches), inline scripts only by
# hash, never 'unsafe-inline'. This is the policy of a site with no inline script; `csp_for_site` adds the
# hashes of the built pages' scripts and styles.
CSP = header_policy(policy([], []))

SECURITY_HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    # browsers ignore HSTS over plain http, so the local origin may send it too
    "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
}

IMMUTABLE = "public, max-age=31536000, immutable"
# pages, sitemaps, the search index and keyslots change every release: caches must ask again soon
SHORT = "public, max-age=60, must-revalidate"
# unhashed static files (images, lunr language packs): stale for at most ten minutes after a release
STATIC = "public, max-age=600, must-revalidate"

# mkdocs-material's `main.57a0d79d.min.css`, `bundle.a5f9d56c.min.js`, `search.a7633da7.min.js(.map)`
_HASHED = re.compile(r"\.[0-9a-f]{8,64}\.")
_TEXT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".svg": "image/svg+xml",
    ".webmanifest": "application/manifest+json",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ico": "image/x-icon",
    ".gz": "application/gzip",
}
HOST_FILES = ("_headers", "_redirects")
PREMIUM_DIR = "assets/premium/"
KEYSLOTS_DIR = "assets/keyslots/"


@dataclass(frozen=True)
class ObjectHeaders:
    """The HTTP metadata one site file is stored and served with."""

    content_type: str
    cache_control: str
    content_encoding: str | None = None


def is_immutable(path: str) -> bool:
    """Whether a site path names content that never changes under that name (hashed or ciphertext)."""
    if path.startswith(KEYSLOTS_DIR):
        return False  # keyslot files keep their names and are rewritten each release
    return path.startswith(PREMIUM_DIR) or bool(_HASHED.search(PurePosixPath(path).name))


def is_page(path: str) -> bool:
    """HTML pages, served at their directory URL."""
    return path.endswith(".html")


def is_sitemap(path: str) -> bool:
    """`sitemap.xml`, `sitemap.xml.gz` and sitemap index shards."""
    name = PurePosixPath(path).name
    return name.startswith("sitemap") and (name.endswith(".xml") or name.endswith(".xml.gz"))


def _type_of(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in _TEXT_TYPES:
        return _TEXT_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def cache_control_for(path: str) -> str:
    """The Cache-Control value for a site path (a `.gz` variant follows the file it compresses)."""
    base = path[:-3] if path.endswith(".gz") else path
    if is_immutable(base):
        return IMMUTABLE
    if (
        is_page(base)
        or is_sitemap(path)
        or base.startswith(KEYSLOTS_DIR)
        or base.startswith("search/")
        or base in {"robots.txt", *HOST_FILES}
    ):
        return SHORT
    return STATIC


def headers_for(path: str, siblings: Iterable[str] = ()) -> ObjectHeaders:
    """Content type, encoding and cache policy of ``path``; ``siblings`` are the other paths of the site.

    A `.gz` file is one of two things. `sitemap.xml.gz` (and a `.gz` with no uncompressed sibling) is a gzip
    *file*: crawlers download it and gunzip it themselves, so it is `application/gzip` with no Content-Encoding
    (labelling it `Content-Encoding: gzip` makes HTTP clients unpack it in transit and hand an XML body to a
    reader that expects gzip). `x.css.gz` next to `x.css` is a precompressed *representation* of `x.css`:
    `text/css` with `Content-Encoding: gzip`, for an edge rule that picks it when the client accepts gzip.
    """
    cache = cache_control_for(path)
    if path.endswith(".gz"):
        base = path[:-3]
        if not is_sitemap(path) and base in set(siblings):
            return ObjectHeaders(_type_of(base), cache, "gzip")
        return ObjectHeaders("application/gzip", cache)
    return ObjectHeaders(_type_of(path), cache)


def csp_for_site(site_dir: Path, seen: SiteHashes | None = None) -> str:
    """The site's Content-Security-Policy header: the pages' own policy with every page's inline hashes. The
    pages in ``seen`` (hashed by the build as it wrote them) are not read again; every other page is."""
    known = seen.pages if seen is not None else set()
    pages = (p for p in sorted(site_dir.rglob("*.html")) if p.relative_to(site_dir).as_posix() not in known)
    return site_policy((p.read_text("utf-8", errors="replace") for p in pages), seen)


@dataclass(frozen=True)
class HeaderRule:
    """One `_headers` block: a URL pattern (one `*` splat at most) and the headers it sets."""

    pattern: str
    headers: tuple[tuple[str, str], ...]

    def matches(self, url_path: str) -> bool:
        """Whether the rule applies to a URL path, with the splat matching any run of characters."""
        if "*" not in self.pattern:
            return url_path == self.pattern
        head, _, tail = self.pattern.partition("*")
        return url_path.startswith(head) and url_path.endswith(tail) and len(url_path) >= len(head) + len(tail)


def header_rules(site_paths: Iterable[str], csp: str = CSP) -> list[HeaderRule]:
    """The `_headers` rules for a site: security headers everywhere, cache rules that never overlap.

    Cloudflare Pages joins the values of a header set by two matching rules with a comma, so Cache-Control is set
    by disjoint rules only: prefix rules for ciphertext and keyslots, exact paths for hashed assets. HTML and the
    rest keep the hosts' default (revalidate on every request), which is at least as fresh as ours.
    """
    rules = [HeaderRule("/*", (("Content-Security-Policy", csp), *SECURITY_HEADERS.items()))]
    rules.append(HeaderRule("/" + PREMIUM_DIR + "*", (("Cache-Control", IMMUTABLE),)))
    rules.append(HeaderRule("/" + KEYSLOTS_DIR + "*", (("Cache-Control", SHORT),)))
    for path in sorted(site_paths):
        if path.startswith((PREMIUM_DIR, KEYSLOTS_DIR)) or path in HOST_FILES:
            continue
        if is_immutable(path):
            rules.append(HeaderRule("/" + path, (("Cache-Control", IMMUTABLE),)))
    return rules


def render_headers(rules: Iterable[HeaderRule]) -> str:
    """The text of a `_headers` file."""
    out = ["# Written by qbank build: read by Cloudflare Pages and Netlify, and by `qbank serve --built`."]
    for rule in rules:
        out.append(rule.pattern)
        out.extend(f"  {name}: {value}" for name, value in rule.headers)
    return "\n".join(out) + "\n"


def parse_headers(text: str) -> list[HeaderRule]:
    """Read a `_headers` file back into rules (the format hosts read: a path line, then indented headers)."""
    rules: list[HeaderRule] = []
    pattern: str | None = None
    headers: list[tuple[str, str]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if raw[0] not in " \t":
            if pattern is not None:
                rules.append(HeaderRule(pattern, tuple(headers)))
            pattern, headers = raw.strip(), []
        elif pattern is not None and ":" in raw:
            name, _, value = raw.strip().partition(":")
            headers.append((name.strip(), value.strip()))
    if pattern is not None:
        rules.append(HeaderRule(pattern, tuple(headers)))
    return rules


def render_redirects(redirects: Mapping[str, str]) -> str:
    """The text of a `_redirects` file: one `from to 301` line per moved page.

    No catch-all 404 line: both hosts serve the top-level `404.html` with status 404 when it exists, and
    Cloudflare Pages rejects status 404 in `_redirects`.
    """
    out = [
        "# Written by qbank build: moved pages (Cloudflare Pages / Netlify format).",
        "# Unknown paths get /404.html with status 404 from the host itself.",
    ]
    out.extend(f"{src} {dst} 301" for src, dst in sorted(redirects.items()))
    return "\n".join(out) + "\n"


def parse_redirects(text: str) -> dict[str, tuple[str, int]]:
    """Read a `_redirects` file back: source path -> (target, status)."""
    result: dict[str, tuple[str, int]] = {}
    for raw in text.splitlines():
        parts = raw.split()
        if len(parts) >= 2 and not parts[0].startswith("#"):
            status = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 301
            result[parts[0]] = (parts[1], status)
    return result


def site_files(site_dir: Path) -> list[str]:
    """Every file of a built site as a site-relative POSIX path: what ``rglob("*")`` keeps with ``is_file()``
    (symbolic links to files in, folders behind a symbolic link not entered), one directory read per folder
    instead of a ``stat`` per entry (18,000 files at 5,000 questions)."""
    found: list[str] = []
    folders = [("", str(site_dir))]
    while folders:
        prefix, folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append((f"{prefix}{entry.name}/", entry.path))
                elif entry.is_file():
                    found.append(prefix + entry.name)
    return found


def write_host_files(site_dir: Path, redirects: Mapping[str, str] | None = None, csp: str | None = None) -> list[Path]:
    """Write `_headers` and `_redirects` into a built site; returns the files written."""
    paths = site_files(site_dir)
    policy = csp if csp is not None else csp_for_site(site_dir)
    headers = site_dir / "_headers"
    headers.write_text(render_headers(header_rules(paths, policy)), "utf-8")
    redir = site_dir / "_redirects"
    redir.write_text(render_redirects(redirects or {}), "utf-8")
    return [headers, redir]
