"""Social cards: drawn from free metadata with the shipped font, deterministic, cached by their text."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from qbank.cards.draw import HEIGHT, WIDTH, card_png, font, wrap
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


def test_long_titles_wrap_and_end_whole() -> None:
    lines = wrap("word " * 80, font("Bold", 56), WIDTH - 144, 4)
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


def test_the_shared_backdrop_gives_the_pixels_of_drawing_everything_in_turn() -> None:
    from PIL import ImageDraw

    from qbank.cards import draw as d

    title = "A title long enough to wrap over all four lines of the card and end with an ellipsis " * 2
    image = Image.new("RGB", (WIDTH, HEIGHT), d.BACKGROUND)
    pen = ImageDraw.Draw(image)
    pen.rectangle((0, HEIGHT - 16, WIDTH, HEIGHT), fill=d.ACCENT)
    for i, h in enumerate((18, 30, 44, 60)):
        x = d.MARGIN + i * 16
        pen.rounded_rectangle((x, d.MARGIN + 60 - h, x + 10, d.MARGIN + 60), radius=3,
                              fill=d.TEXT if i == 3 else d.MUTED)
    pen.text((d.MARGIN + 84, d.MARGIN + 6), "Prefill", font=font("Bold", 44), fill=d.TEXT)
    pen.text((d.MARGIN, d.MARGIN + 100), "Question · Topic", font=font("Medium", 32), fill=d.ACCENT)
    y = d.MARGIN + 160
    for line in wrap(title, font("Bold", 56), WIDTH - 2 * d.MARGIN, 4):
        pen.text((d.MARGIN, y), line, font=font("Bold", 56), fill=d.TEXT)
        y += int(56 * 1.2)
    pen.text((d.MARGIN, HEIGHT - d.MARGIN - 40), "footer", font=font("Regular", 30), fill=d.MUTED)
    drawn = Image.open(io.BytesIO(card_png(title, "Question · Topic", "footer", "Prefill")))
    assert drawn.convert("RGB").tobytes() == image.tobytes()
