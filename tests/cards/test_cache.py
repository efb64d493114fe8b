"""The card store: keyed by every input of a card's bytes, a corrupted entry is drawn again, a full build prunes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qbank.cards import cache as store
from qbank.cards.draw import card_png
from qbank.cards.make import make_card

TEXT = ("A title", "Question · Topic", "footer", "Prefill")


def test_the_key_changes_with_the_text_and_with_the_drawing(monkeypatch: pytest.MonkeyPatch) -> None:
    key = store.card_key(TEXT)
    assert key == store.card_key(TEXT)
    assert {key} != {store.card_key((*TEXT[:3], "Other")), store.card_key(("B title", *TEXT[1:]))}
    monkeypatch.setattr(store, "drawing_fingerprint", lambda: "another font or drawing code")
    assert store.card_key(TEXT) != key


def test_the_fingerprint_covers_the_fonts_and_the_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from qbank.cards import draw

    def fingerprint() -> str:
        store.drawing_fingerprint.cache_clear()
        return store.drawing_fingerprint()

    fonts = tmp_path / "fonts"
    shutil.copytree(draw.FONTS, fonts)
    monkeypatch.setattr(draw, "FONTS", fonts)
    before = fingerprint()
    bold = fonts / "Roboto-Bold.ttf"
    bold.write_bytes(bold.read_bytes() + b"\0")
    changed_font = fingerprint()
    monkeypatch.setattr(draw, "DRAW_VERSION", draw.DRAW_VERSION + 1)
    assert len({before, changed_font, fingerprint()}) == 3
    monkeypatch.undo()
    store.drawing_fingerprint.cache_clear()


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_a_damaged_entry_is_drawn_again_and_rewritten(tmp_path: Path, damage: str) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    job = ("assets/cards/x.png", TEXT)
    assert make_card(site, job, cache) is True
    (entry,) = cache.glob("*.card")
    data = entry.read_bytes()
    entry.write_bytes({"truncate": data[:-100], "flip": data[:-1] + bytes([data[-1] ^ 1]), "empty": b""}[damage])
    assert store.read_entry(cache, store.card_key(TEXT)) is None
    assert make_card(site, job, cache) is True  # drawn again
    assert (site / job[0]).read_bytes() == card_png(*TEXT)
    assert entry.read_bytes() == data  # and the entry rewritten whole
    assert make_card(site, job, cache) is False


def test_prune_keeps_the_named_entries_and_other_files(tmp_path: Path) -> None:
    for key in ("a", "b", "c"):
        store.write_entry(tmp_path, key, b"png")
    (tmp_path / ".c.card.123.tmp").write_bytes(b"another build's write in progress")
    assert store.prune(tmp_path, {"b"}) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".c.card.123.tmp", "b.card"]
    assert store.prune(tmp_path / "missing", set()) == 0
