"""Operator's view of a built page: recover its premium text with a license key, as the browser does."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from cryptography.exceptions import InvalidTag

from .keys import derive, parse_key
from .release import open_fragment, unb64, unwrap
from .slots import SLOT_DIR, shard_of

PLACEHOLDER_RE = re.compile(
    r'<section class="qb-premium qb-locked" id="[^"]*" '
    r'data-qb-section="(?P<section>[^"]*)" data-qb-file="(?P<file>[^"]*)">'
    r"\s*<h2[^>]*>(?P<heading>.*?)</h2>",
    re.DOTALL,
)


class DecryptError(ValueError):
    """Why a page's premium text cannot be recovered: ``reason`` is a stable word, the message says more."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Opened:
    """One decrypted premium section."""

    section: str
    heading: str
    html: str


def page_file(site: Path, url: str, base_path: str = "/") -> tuple[Path, str]:
    """The built HTML file of a page URL (absolute or a path) and the page's URL path."""
    path = urlparse(url).path or "/"
    if not path.startswith("/"):
        path = "/" + path
    if path.endswith("index.html"):
        path = path[: -len("index.html")]
    if not path.endswith("/") and "." not in path.rsplit("/", 1)[-1]:
        path += "/"
    rel = path[len(base_path.rstrip("/")) :] if path.startswith(base_path.rstrip("/") + "/") else path
    target = site / rel.lstrip("/")
    return (target / "index.html" if path.endswith("/") else target), path


def decrypt_page(site: Path, url: str, key: str, base_path: str = "/") -> list[Opened]:
    """Every premium section of a built page, decrypted with ``key``; raises DecryptError otherwise."""
    file, path = page_file(site, url, base_path)
    if not file.is_file():
        raise DecryptError("no-page", f"no built page at {file}")
    spots = list(PLACEHOLDER_RE.finditer(file.read_text(encoding="utf-8")))
    if not spots:
        raise DecryptError("no-premium", f"{path} has no premium sections")
    d = derive(parse_key(key))
    shard_file = site / SLOT_DIR / f"{shard_of(d.identifier)}.json"
    if not shard_file.is_file():
        raise DecryptError("no-slots", f"no keyslot file {shard_file}: was the site built with the paywall on?")
    shard = json.loads(shard_file.read_text())
    slot = shard["slots"].get(d.identifier)
    if slot is None:
        ended = shard["ended"].get(d.identifier)
        if ended and ended["s"] == "expired":
            raise DecryptError("expired", f"this license expired on {ended.get('on')}")
        if ended:
            raise DecryptError("revoked", "this license was revoked")
        raise DecryptError("unknown", "this key has no keyslot in this release")
    release_key = unwrap(d.kek, unb64(slot["k"]))
    if release_key is None:
        raise DecryptError("tampered", "the keyslot does not open with this key (corrupted keyslot file)")
    out: list[Opened] = []
    for m in spots:
        body = json.loads((site / "assets" / "premium" / m.group("file")).read_text())
        if body["release"] != shard["release"]:
            raise DecryptError("stale", "the page and the keyslots belong to different releases")
        sec = body["sections"][m.group("section")]
        try:
            text = open_fragment(release_key, unb64(sec["n"]), unb64(sec["c"]), path, m.group("section"))
        except InvalidTag as exc:
            raise DecryptError("tampered", f"section {m.group('section')} fails authentication") from exc
        out.append(Opened(m.group("section"), html.unescape(re.sub(r"<[^>]*>", "", m.group("heading"))), text))
    return out
