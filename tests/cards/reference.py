"""The card as drawn before palette cards (``DRAW_VERSION`` 2): Pillow's ``ImageDraw.text`` in RGB, wrapped with
``ImageFont.getlength``. An oracle for the tests, independent of ``qbank.cards.glyphs``; not used by the build."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from qbank.cards import draw


def reference_wrap(text: str, face: ImageFont.FreeTypeFont, width: int, max_lines: int) -> list[str]:
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


def reference_card(title: str, kicker: str, footer: str, brand: str) -> Image.Image:
    w, h, margin = draw.WIDTH, draw.HEIGHT, draw.MARGIN
    image = Image.new("RGB", (w, h), draw.BACKGROUND)
    pen = ImageDraw.Draw(image)
    pen.rectangle((0, h - 16, w, h), fill=draw.ACCENT)
    for i, bar in enumerate((18, 30, 44, 60)):
        x = margin + i * 16
        pen.rounded_rectangle((x, margin + 60 - bar, x + 10, margin + 60), radius=3,
                              fill=draw.TEXT if i == 3 else draw.MUTED)
    pen.text((margin + 84, margin + 6), brand, font=draw.font("Bold", 44), fill=draw.TEXT)
    pen.text((margin, margin + 100), kicker, font=draw.font("Medium", 32), fill=draw.ACCENT)
    size = 64 if len(title) <= 48 else 56
    face = draw.font("Bold", size)
    y = margin + 160
    for line in reference_wrap(title, face, w - 2 * margin, 4):
        pen.text((margin, y), line, font=face, fill=draw.TEXT)
        y += int(size * 1.2)
    pen.text((margin, h - margin - 40), footer, font=draw.font("Regular", 30), fill=draw.MUTED)
    return image
