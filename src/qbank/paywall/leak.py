"""The leak scan: no premium text may appear in any file of the built site.

Premium text is fingerprinted from the *sources* (``qbank.seal.premium_text``): every ``/// premium`` block
of the answers and every premium question's executed derivation, never from the sealed HTML, and no free
text exempts any of it (a free part that repeats premium text is a ``premium-duplicated`` error at
``qbank check`` instead). Each file is read in every form a leak could hide in (raw, tags stripped,
entities, JSON strings, URL-encoding, JavaScript escapes; gzip decompressed), whatever its type (.html,
.json, .js, .css, .txt, .xml, ...); a leak is a run of ``MIN_WORDS`` consecutive words of one premium
text, or the whole of a premium text shorter than that. Ciphertext is base64 and cannot match a run.
"""

from __future__ import annotations

import contextlib
import gzip
import html
import json
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..seal.premium_text import MIN_WORDS, PremiumPrints, Source, repeats, words

TAG_RE = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class Leak:
    """One premium text found in one file."""

    file: str
    source: str
    what: str
    heading: str


def _json_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


def views(raw: str, name: str) -> list[str]:
    """The readings of a file a leak could hide in: raw, tags stripped, entities, JSON, URL-encoding."""
    # entity-decoded whole text (body and attributes such as meta and Open Graph content), then the
    # same with tags removed (a phrase broken by <em> or by a line wrap in the markup)
    out = [html.unescape(raw), html.unescape(TAG_RE.sub(" ", raw))]
    if name.endswith(".json") or raw.lstrip().startswith(("{", "[")):
        try:
            text = " ".join(_json_strings(json.loads(raw)))
            out.append(html.unescape(TAG_RE.sub(" ", text)))
        except ValueError:
            pass
    if "%" in raw:
        out.append(urllib.parse.unquote_plus(raw))
    # JavaScript/JSON escapes inside HTML (a JSON-LD block, inline config): decode \uXXXX and \n
    if "\\u" in raw or "\\n" in raw:
        out.append(re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), raw).replace("\\n", " "))
    return out


def scan_text(raw: str, name: str, prints: PremiumPrints, min_words: int = MIN_WORDS) -> list[Source]:
    """The premium texts that occur in one file's text."""
    found: dict[tuple[str, str], Source] = {}
    for view in views(raw, name):
        ws = words(view)
        for _, owner, _ in repeats(ws, prints, min_words):
            found[(owner.path, owner.what)] = owner
        if prints.short:
            joined = " " + " ".join(ws) + " "
            for needle, owner in prints.short:
                if needle in joined:
                    found[(owner.path, owner.what)] = owner
    return list(found.values())


def read_file(path: Path) -> str:
    """A file's bytes as text, gzip files decompressed."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError):  # not gzip after all: scan the bytes as they are
            data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def scan_site(site: Path, prints: PremiumPrints, min_words: int = MIN_WORDS) -> list[Leak]:
    """Every (file, premium text) pair where premium text appears in the built site."""
    if not prints.long and not prints.short:
        return []
    leaks: list[Leak] = []
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        rel = path.relative_to(site).as_posix()
        for owner in scan_text(read_file(path), rel, prints, min_words):
            leaks.append(Leak(rel, owner.path, owner.what, owner.heading))
    return leaks
