"""A content-addressed store of drawn cards under ``.qbank/cards/``, outside the site.

An entry's name is a hash of everything that decides a card's bytes: its text (title, kicker, footer, brand),
the drawing and encoding code (``draw.py``, ``glyphs.py``, ``palette.py``, ``png.py`` and ``DRAW_VERSION``),
the three font files, Pillow's version and the zlib that deflates it. An entry holds the SHA-256 of its PNG
followed by the PNG; an entry whose hash does not match (a torn or corrupted file) reads as missing, so the card
is drawn again and the entry rewritten. Entries are written whole (temp file and rename).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import PIL

from ..atomic import write_atomic
from . import draw, glyphs, palette, png

CARDS_DIR = Path(".qbank/cards")
"""Where the store lives, relative to the repository root (ignored by git, like the verification cache)."""
SUFFIX = ".card"
DIGEST = 32  # bytes of SHA-256 before the PNG

CardText = tuple[str, str, str, str]
"""(title, kicker, footer, brand): everything a card shows."""


@lru_cache(maxsize=1)
def drawing_fingerprint() -> str:
    """A hash of every input of a card's bytes other than its text."""
    h = hashlib.sha256()
    parts: list[bytes] = [
        str(draw.DRAW_VERSION).encode(), PIL.__version__.encode(), zlib.ZLIB_RUNTIME_VERSION.encode(),
        *(Path(str(module.__file__)).read_bytes() for module in (draw, glyphs, palette, png)),
        *(font.read_bytes() for font in sorted(draw.FONTS.glob("Roboto-*.ttf"))),
    ]
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()


def card_key(text: CardText) -> str:
    """The entry name of a card: its text and the drawing's fingerprint."""
    return hashlib.sha256(json.dumps([drawing_fingerprint(), *text]).encode()).hexdigest()[:40]


def entry_path(cache: Path, key: str) -> Path:
    """Where a card's entry lives."""
    return cache / f"{key}{SUFFIX}"


def read_entry(cache: Path, key: str) -> bytes | None:
    """The cached PNG of ``key``; None when missing, unreadable or failing its hash check."""
    try:
        data = entry_path(cache, key).read_bytes()
    except OSError:
        return None
    digest, body = data[:DIGEST], data[DIGEST:]
    if len(digest) < DIGEST or hashlib.sha256(body).digest() != digest:
        return None
    return body


def write_entry(cache: Path, key: str, data: bytes) -> None:
    """Store a card's PNG under ``key``, whole: a reader sees the old entry, the new one or none."""
    write_atomic(entry_path(cache, key), hashlib.sha256(data).digest() + data)


def prune(cache: Path, keep: Iterable[str]) -> int:
    """Remove the entries whose key is not in ``keep``; returns how many went.

    A full build keeps the store to its own cards, so it never grows past one site's worth. Temp files are
    left alone: another build may be about to rename its own into place."""
    wanted = set(keep)
    removed = 0
    if not cache.is_dir():
        return 0
    for path in cache.iterdir():
        if path.name.endswith(SUFFIX) and not path.name.startswith(".") and path.stem not in wanted:
            path.unlink(missing_ok=True)
            removed += 1
    return removed
