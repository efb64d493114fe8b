"""Draw a page's social card (1200×630 PNG) from free fields only: its short title, its kind and the brand.

The font is Roboto (Apache 2.0), shipped inside the ``font-roboto`` wheel, so a build needs no network and no
system font. Output is deterministic for the same text: cards of unchanged pages keep their bytes, so a deploy
uploads only the cards that changed.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import font_roboto  # type: ignore[import-untyped]  # a font wheel: no code to type
from PIL import Image, ImageDraw, ImageFont

from .png import encode_png

WIDTH, HEIGHT = 1200, 630
DRAW_VERSION = 2
"""Bump when the drawing changes: cached cards are keyed by it and their text."""
MARGIN = 72
BACKGROUND = (26, 35, 126)  # the logo's indigo
ACCENT = (255, 202, 40)
TEXT = (255, 255, 255)
MUTED = (197, 202, 233)
FONTS = Path(font_roboto.__file__).parent / "files"


@lru_cache(maxsize=8)
def font(weight: str, size: int) -> ImageFont.FreeTypeFont:
    """Roboto at a weight (Regular, Medium, Bold) and pixel size."""
    return ImageFont.truetype(str(FONTS / f"Roboto-{weight}.ttf"), size)


def wrap(text: str, face: ImageFont.FreeTypeFont, width: int, max_lines: int) -> list[str]:
    """Greedy word wrap to ``width`` pixels; a title too long for ``max_lines`` ends its last line with …."""
    lines: list[str] = []
    words = text.split()
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and face.getlength(f"{line} {words[0]}") <= width:
            line += " " + words.pop(0)
        lines.append(line)
    if words:
        last = lines[-1]
        while last and face.getlength(last + " …") > width:
            last = last.rsplit(" ", 1)[0] if " " in last else last[:-1]
        lines[-1] = last + " …"
    return lines


@lru_cache(maxsize=4)
def backdrop(brand: str) -> Image.Image:
    """What every card shares, drawn once: the background, the accent bar, the logo's bars and the brand.
    Copying it gives the same pixels as drawing it (the later text never overlaps these)."""
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, HEIGHT - 16, WIDTH, HEIGHT), fill=ACCENT)
    # the logo's bars, small, beside the brand
    for i, h in enumerate((18, 30, 44, 60)):
        x = MARGIN + i * 16
        draw.rounded_rectangle((x, MARGIN + 60 - h, x + 10, MARGIN + 60), radius=3, fill=TEXT if i == 3 else MUTED)
    draw.text((MARGIN + 84, MARGIN + 6), brand, font=font("Bold", 44), fill=TEXT)
    return image


def card_image(title: str, kicker: str, footer: str, brand: str) -> Image.Image:
    """The card: brand and kicker (e.g. "Question · KV Cache & Memory") on top, the title large, a footer line."""
    image = backdrop(brand).copy()
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, MARGIN + 100), kicker, font=font("Medium", 32), fill=ACCENT)
    size = 64 if len(title) <= 48 else 56
    face = font("Bold", size)
    y = MARGIN + 160
    for line in wrap(title, face, WIDTH - 2 * MARGIN, 4):
        draw.text((MARGIN, y), line, font=face, fill=TEXT)
        y += int(size * 1.2)
    draw.text((MARGIN, HEIGHT - MARGIN - 40), footer, font=font("Regular", 30), fill=MUTED)
    return image


def card_png(title: str, kicker: str, footer: str, brand: str) -> bytes:
    """The card as PNG bytes."""
    return encode_png(card_image(title, kicker, footer, brand))
