"""Draw a page's social card (1200×630 PNG) from free fields only: its short title, its kind and the brand.

The font is Roboto (Apache 2.0), shipped inside the ``font-roboto`` wheel, so a build needs no network and no
system font. Output is deterministic for the same text: cards of unchanged pages keep their bytes, so a deploy
uploads only the cards that changed.

A card is a palette image (``qbank.cards.palette``): each pixel is the background with one ink over it at some
coverage. The text is laid out from glyphs rasterised once per font, size and character (``qbank.cards.glyphs``),
which gives the coverage of Pillow's ``ImageDraw.text``; the backdrop every card shares is computed once.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import font_roboto  # type: ignore[import-untyped]  # a font wheel: no code to type
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .glyphs import Face, draw_text
from .palette import index_of_coverage, palette
from .png import encode_indexed

WIDTH, HEIGHT = 1200, 630
DRAW_VERSION = 3
"""Bump when the drawing changes: cached cards are keyed by it and their text."""
MARGIN = 72
BACKGROUND = (26, 35, 126)  # the logo's indigo
ACCENT = (255, 202, 40)
TEXT = (255, 255, 255)
MUTED = (197, 202, 233)
INKS = (TEXT, ACCENT, MUTED)
INK_TEXT, INK_ACCENT, INK_MUTED = range(3)
FONTS = Path(font_roboto.__file__).parent / "files"


@lru_cache(maxsize=8)
def font(weight: str, size: int) -> ImageFont.FreeTypeFont:
    """Roboto at a weight (Regular, Medium, Bold) and pixel size."""
    return ImageFont.truetype(str(FONTS / f"Roboto-{weight}.ttf"), size)


@lru_cache(maxsize=8)
def face(weight: str, size: int) -> Face:
    """Roboto at a weight and size, with its glyphs remembered (one per process, shared by every card)."""
    return Face(font(weight, size))


def wrap(text: str, face: Face, width: int, max_lines: int) -> list[str]:
    """Greedy word wrap to ``width`` pixels; a title too long for ``max_lines`` ends its last line with …."""
    lines: list[str] = []
    words = text.split()
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and face.length(f"{line} {words[0]}") <= width:
            line += " " + words.pop(0)
        lines.append(line)
    if words:
        last = lines[-1]
        while last and face.length(last + " …") > width:
            last = last.rsplit(" ", 1)[0] if " " in last else last[:-1]
        lines[-1] = last + " …"
    return lines


Box = tuple[int, int, int, int]
"""Rows then columns, ends excluded."""


def paint(indices: np.ndarray, coverage: np.ndarray, ink: int, boxes: list[Box]) -> None:
    """Lay an ink's coverage over ``indices`` inside ``boxes``, where it covers anything."""
    lut = index_of_coverage(ink)
    for r0, r1, c0, c1 in boxes:
        region, cover = indices[r0:r1, c0:c1], coverage[r0:r1, c0:c1]
        np.copyto(region, lut[cover], where=cover > 0)


@lru_cache(maxsize=4)
def backdrop(brand: str) -> np.ndarray:
    """What every card shares, as palette indices, computed once: the background, the accent bar, the logo's
    bars and the brand. The later text never overlaps these."""
    layers = [Image.new("L", (WIDTH, HEIGHT)) for _ in INKS]
    ImageDraw.Draw(layers[INK_ACCENT]).rectangle((0, HEIGHT - 16, WIDTH, HEIGHT), fill=255)
    # the logo's bars, small, beside the brand
    for i, h in enumerate((18, 30, 44, 60)):
        x = MARGIN + i * 16
        layer = layers[INK_TEXT if i == 3 else INK_MUTED]
        ImageDraw.Draw(layer).rounded_rectangle((x, MARGIN + 60 - h, x + 10, MARGIN + 60), radius=3, fill=255)
    coverage = [np.asarray(layer, np.uint8).reshape(HEIGHT, WIDTH).astype(np.uint16) for layer in layers]
    draw_text(coverage[INK_TEXT], face("Bold", 44), (MARGIN + 84, MARGIN + 6), brand)
    indices = np.zeros((HEIGHT, WIDTH), np.uint8)
    for ink, cover in enumerate(coverage):
        paint(indices, cover, ink, [(0, HEIGHT, 0, WIDTH)])
    indices.flags.writeable = False
    return indices


def card_indices(title: str, kicker: str, footer: str, brand: str) -> np.ndarray:
    """The card as palette indices: brand and kicker (e.g. "Question · KV Cache & Memory") on top, the title
    large, a footer line, drawn in that order."""
    indices = backdrop(brand).copy()
    accent = np.zeros((HEIGHT, WIDTH), np.uint16)
    layers = [(accent, INK_ACCENT, draw_text(accent, face("Medium", 32), (MARGIN, MARGIN + 100), kicker))]
    size = 64 if len(title) <= 48 else 56
    title_face = face("Bold", size)
    text = np.zeros((HEIGHT, WIDTH), np.uint16)
    boxes: list[Box] = []
    y = MARGIN + 160
    for line in wrap(title, title_face, WIDTH - 2 * MARGIN, 4):
        boxes += draw_text(text, title_face, (MARGIN, y), line)
        y += int(size * 1.2)
    layers.append((text, INK_TEXT, boxes))
    muted = np.zeros((HEIGHT, WIDTH), np.uint16)
    layers.append((muted, INK_MUTED, draw_text(muted, face("Regular", 30), (MARGIN, HEIGHT - MARGIN - 40), footer)))
    for coverage, ink, drawn in layers:
        paint(indices, coverage, ink, drawn)
    mix(indices, layers)
    return indices


def mix(indices: np.ndarray, layers: list[tuple[np.ndarray, int, list[Box]]]) -> None:
    """Where two inks cover the same pixel (a four-line title's descenders in the footer's rows), the entry
    nearest to what drawing one ink over the other gives: the palette holds one ink a pixel."""
    spans = [(min(r0 for r0, _, _, _ in boxes), max(r1 for _, r1, _, _ in boxes)) for _, _, boxes in layers if boxes]
    overlap = [(max(a0, b0), min(a1, b1)) for i, (a0, a1) in enumerate(spans) for b0, b1 in spans[i + 1:]]
    for r0, r1 in overlap:
        if r0 >= r1:
            continue
        covered = np.zeros((r1 - r0, WIDTH), np.uint8)
        for coverage, _, _ in layers:
            covered += coverage[r0:r1] > 0
        rows, cols = np.nonzero(covered > 1)
        if not rows.size:
            continue
        colour = np.tile(np.array(BACKGROUND, np.int64), (rows.size, 1))
        for coverage, ink, _ in layers:
            cover = coverage[rows + r0, cols].astype(np.int64)[:, None]
            value = np.array(INKS[ink], np.int64) * cover + colour * (255 - cover) + 128
            colour = (value + (value >> 8)) >> 8  # Pillow's rounding (DIV255)
        entries = np.frombuffer(palette(BACKGROUND, INKS), np.uint8).reshape(-1, 3).astype(np.int64)
        nearest = ((colour[:, None, :] - entries[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        indices[rows + r0, cols] = nearest.astype(np.uint8)


def card_image(title: str, kicker: str, footer: str, brand: str) -> Image.Image:
    """The card as a palette ("P") image."""
    image = Image.frombuffer("P", (WIDTH, HEIGHT), card_indices(title, kicker, footer, brand).tobytes())
    image.putpalette(palette(BACKGROUND, INKS))
    return image


def card_png(title: str, kicker: str, footer: str, brand: str) -> bytes:
    """The card as PNG bytes."""
    return encode_indexed(card_indices(title, kicker, footer, brand), palette(BACKGROUND, INKS))
