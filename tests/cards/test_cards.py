"""Social cards: drawn from free metadata with the shipped font, deterministic, cached by their text."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from qbank.cards.draw import HEIGHT, WIDTH, backdrop, card_image, card_png, face, wrap
from qbank.cards.pages import card_text, write_cards
from qbank.render.seo import PageMeta, card_path


def meta(path: str, title: str, kind: str, crumbs: tuple[tuple[str, str], ...]) -> PageMeta:
    return PageMeta(path=path, title=title, description="d" * 80, crumbs=crumbs, kind=kind)


Q = meta("questions/x.md", "KV cache for one request", "question",
         (("Home", "index.md"), ("Topics", "topics/index.md"), ("KV Cache & Memory", "topics/kv.md"),
          ("KV cache for one request", "questions/x.md")))


def test_card_is_a_deterministic_png_of_the_open_graph_size() -> None:
    a = card_png("A title", "Question · Topic", "footer", "Prefill")
    assert a == card_png("A title", "Question · Topic", "footer", "Prefill")
    assert a != card_png("Another title", "Question · Topic", "footer", "Prefill")
    image = Image.open(io.BytesIO(a))
    assert image.format == "PNG" and image.size == (WIDTH, HEIGHT)
    drawn = card_image("A title", "Question · Topic", "footer", "Prefill")
    assert drawn.mode == "P" and drawn.convert("RGB").tobytes() == image.convert("RGB").tobytes()


def test_long_titles_wrap_and_end_whole() -> None:
    lines = wrap("word " * 80, face("Bold", 56), WIDTH - 144, 4)
    assert len(lines) == 4 and lines[-1].endswith(" …") and all("wor …" not in ln for ln in lines)


def test_card_text_comes_from_free_metadata() -> None:
    assert card_text(Q) == ("KV cache for one request", "Question · KV Cache & Memory",
                            "Worked answer · every number re-derived by code")
    assert card_path(Q.path) == "assets/cards/questions-x.png"
    assert card_path("index.md") == "assets/cards/home.png"


def test_cards_are_written_and_cached_by_their_text(tmp_path: Path) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    assert write_cards(site, [Q], cache) == 1
    assert write_cards(site, [Q], cache) == 0  # unchanged text: from the cache
    (entry,) = cache.glob("*.card")  # the PNG after its SHA-256 (qbank.cards.cache)
    assert (site / "assets/cards/questions-x.png").read_bytes() == entry.read_bytes()[32:]


def test_the_shared_backdrop_is_computed_once_and_never_written() -> None:
    """Every card starts from a copy of the same indices; a card drawn over it leaves it as it was."""
    before = backdrop("Prefill").copy()
    card_png("A title long enough to wrap " * 6, "Question · Topic", "footer", "Prefill")
    assert backdrop("Prefill") is backdrop("Prefill") and not backdrop("Prefill").flags.writeable
    assert np.array_equal(backdrop("Prefill"), before)
    assert not np.array_equal(backdrop("Prefill"), backdrop("Other"))
