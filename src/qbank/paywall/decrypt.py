"""Operator's view of a built page: recover its premium text with a license key, as the browser does."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from cryptography.exceptions import InvalidTag

from ..epoch.sections import FORMAT as SECTION_FORMAT
from ..epoch.sections import SealedSection, open_section
from .keys import derive, parse_key
from .release import open_fragment, unb64
from .slots import open_entry, shard_of, shard_path

PLACEHOLDER_RE = re.compile(
    r'<section class="qb-premium qb-locked" id="[^"]*" '
    r'data-qb-section="(?P<section>[^"]*)" data-qb-file="(?P<file>[^"]*)">'
    r"\s*<h2[^>]*>(?P<heading>.*?)</h2>",
    re.DOTALL,
)
RELEASE_RE = re.compile(r'<meta name="qbank-release" content="([0-9a-f]+)">')


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
    text = file.read_text(encoding="utf-8")
    spots = list(PLACEHOLDER_RE.finditer(text))
    if not spots:
        raise DecryptError("no-premium", f"{path} has no premium sections")
    named = RELEASE_RE.search(text)
    if named is None:
        raise DecryptError("no-release", f"{path} does not name its release (built before keyslots were versioned?)")
    release_id = named.group(1)
    d = derive(parse_key(key))
    shard_file = site / shard_path(release_id, shard_of(d.identifier))
    if not shard_file.is_file():
        raise DecryptError(
            "no-slots", f"no keyslot file {shard_file}: run `qbank paywall keyslots` for release {release_id}"
        )
    shard = json.loads(shard_file.read_text())
    try:
        opened = open_entry(shard, d.identifier, d.kek)
    except ValueError as exc:
        raise DecryptError("tampered", f"{exc} (corrupted keyslot file)") from exc
    if opened is None:
        raise DecryptError("unknown", "this key has no keyslot in this release")
    status, release_key = opened
    if status.status == "expired":
        raise DecryptError("expired", f"this license expired on {status.date}")
    if status.status == "revoked" or release_key is None:
        raise DecryptError("revoked", "this license was revoked")
    out: list[Opened] = []
    for m in spots:
        body = json.loads((site / "assets" / "premium" / m.group("file")).read_text())
        if body["release"] != release_id:
            raise DecryptError("stale", "the page and its ciphertext belong to different releases")
        sec = body["sections"].get(m.group("section"))
        if not isinstance(sec, dict):
            raise DecryptError("tampered", f"section {m.group('section')} is not in its ciphertext file")
        try:
            if body.get("v") == SECTION_FORMAT:
                sealed = SealedSection(str(sec["d"]), unb64(sec["n"]), unb64(sec["c"]))
                plain = open_section(release_key, path, m.group("section"), sealed)
            else:
                plain = open_fragment(release_key, unb64(sec["n"]), unb64(sec["c"]), path, m.group("section"))
        except (InvalidTag, ValueError) as exc:  # ValueError: a name check_names refuses, bad base64
            raise DecryptError("tampered", f"section {m.group('section')} fails authentication") from exc
        out.append(Opened(m.group("section"), html.unescape(re.sub(r"<[^>]*>", "", m.group("heading"))), plain))
    return out
