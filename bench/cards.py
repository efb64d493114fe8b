"""Social cards: CPU per card, the drawing before palette cards against the current one, in the same process.

``old``: the card drawn with Pillow's ``ImageDraw.text`` in RGB over a copied RGB backdrop and wrapped with
``ImageFont.getlength`` (the drawing of ``DRAW_VERSION`` 2, kept here and in ``tests/cards`` only), encoded by
``qbank.cards.png.encode_png`` (RGB). ``new``: ``qbank.cards.draw.card_png`` (palette indices from glyphs
rasterised once, ``encode_indexed``). Titles are varied and generated (seeded); both paths run over the same
titles, interleaved in rounds, after one first pass each over all the titles (reported apart: the new drawing
rasterises glyphs and checks words as they first come, as a fresh worker process does). Times are
``time.process_time`` (CPU of this process).

    python bench/cards.py --cards 500 --rounds 3

Prints ms per card (draw, encode, total) for each and the ratio old / new. Noisy on a shared machine: read the
ratio, and the load average it prints.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from functools import lru_cache

from PIL import Image, ImageDraw

from qbank.cards import draw
from qbank.cards.palette import palette
from qbank.cards.png import encode_indexed, encode_png

VOCABULARY = ("KV cache paged attention block size prefill decode batch H100 H200 FP8 tensor parallel speculative "
         "decoding draft model acceptance rate throughput latency memory bandwidth roofline FlashAttention "
         "quantization AWQ GPTQ int4 weights activations MoE experts routing all-to-all NVLink context 128k "
         "tokens per second why does how would you estimate the of for at with on an a in fragmentation offload "
         "office efficient")
WORDS = VOCABULARY.split()
KICKERS = ("Question · KV Cache & Memory", "Question · Speculative Decoding", "Topic", "Company · NVIDIA")
FOOTER = "Worked answer · every number re-derived by code"


def titles(count: int, seed: int = 7) -> list[str]:
    """Short to four-line titles, some with a long word, a non-Latin word or an emoji."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.choice((3, 6, 9, 12, 16, 30)))]
        extra = rng.random()
        if extra < 0.05:
            words.append("Привет·мир")
        elif extra < 0.08:
            words.append("日本語 😀")
        elif extra < 0.1:
            words.append("x" * 60)
        out.append(" ".join(words).capitalize() + "?")
    return out


def old_wrap(text: str, face: object, width: int, max_lines: int) -> list[str]:
    lines: list[str] = []
    words = text.split()
    length = face.getlength  # type: ignore[attr-defined]
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and length(f"{line} {words[0]}") <= width:
            line += " " + words.pop(0)
        lines.append(line)
    if words:
        last = lines[-1]
        while last and length(last + " …") > width:
            last = last.rsplit(" ", 1)[0] if " " in last else last[:-1]
        lines[-1] = last + " …"
    return lines


@lru_cache(maxsize=4)
def old_backdrop(brand: str) -> Image.Image:
    image = Image.new("RGB", (draw.WIDTH, draw.HEIGHT), draw.BACKGROUND)
    pen = ImageDraw.Draw(image)
    pen.rectangle((0, draw.HEIGHT - 16, draw.WIDTH, draw.HEIGHT), fill=draw.ACCENT)
    for i, h in enumerate((18, 30, 44, 60)):
        x = draw.MARGIN + i * 16
        pen.rounded_rectangle((x, draw.MARGIN + 60 - h, x + 10, draw.MARGIN + 60), radius=3,
                              fill=draw.TEXT if i == 3 else draw.MUTED)
    pen.text((draw.MARGIN + 84, draw.MARGIN + 6), brand, font=draw.font("Bold", 44), fill=draw.TEXT)
    return image


def old_image(title: str, kicker: str, footer: str, brand: str) -> Image.Image:
    image = old_backdrop(brand).copy()
    pen = ImageDraw.Draw(image)
    pen.text((draw.MARGIN, draw.MARGIN + 100), kicker, font=draw.font("Medium", 32), fill=draw.ACCENT)
    size = 64 if len(title) <= 48 else 56
    face = draw.font("Bold", size)
    y = draw.MARGIN + 160
    for line in old_wrap(title, face, draw.WIDTH - 2 * draw.MARGIN, 4):
        pen.text((draw.MARGIN, y), line, font=face, fill=draw.TEXT)
        y += int(size * 1.2)
    pen.text((draw.MARGIN, draw.HEIGHT - draw.MARGIN - 40), footer, font=draw.font("Regular", 30), fill=draw.MUTED)
    return image


def cpu_ms(fn: Callable[..., object], calls: list[tuple[object, ...]]) -> tuple[float, list[object]]:
    """CPU ms per call of ``fn`` over ``calls`` (argument tuples), and what it returned."""
    out = []
    start = time.process_time()
    for args in calls:
        out.append(fn(*args))
    return (time.process_time() - start) * 1000 / len(calls), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cards", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    jobs = [(t, KICKERS[i % len(KICKERS)]) for i, t in enumerate(titles(args.cards))]
    plte = palette(draw.BACKGROUND, draw.INKS)
    print(f"load average at start: {os.getloadavg()}")
    texts: list[tuple[object, ...]] = [(t, k, FOOTER, "Prefill") for t, k in jobs]
    # first pass, as a fresh worker process: fonts loaded, glyphs rasterised and words checked as they come
    first_old = cpu_ms(old_image, texts)[0]
    draw.font.cache_clear()
    draw.face.cache_clear()
    draw.backdrop.cache_clear()
    first_new = cpu_ms(draw.card_indices, texts)[0]
    print(f"first pass over {len(texts)} titles (draw only, empty caches): old {first_old:.2f} ms per card, "
          f"new {first_new:.2f}")
    figures: dict[str, list[float]] = {k: [] for k in ("old draw", "old encode", "new draw", "new encode")}
    for _ in range(args.rounds):
        ms, images = cpu_ms(old_image, texts)
        figures["old draw"].append(ms)
        figures["old encode"].append(cpu_ms(encode_png, [(image,) for image in images])[0])
        ms, indices = cpu_ms(draw.card_indices, texts)
        figures["new draw"].append(ms)
        figures["new encode"].append(cpu_ms(encode_indexed, [(i, plte) for i in indices])[0])
    best = {k: min(v) for k, v in figures.items()}
    for name, values in figures.items():
        print(f"{name:>10}: best {best[name]:6.2f} ms per card, median {statistics.median(values):6.2f}")
    old, new = best["old draw"] + best["old encode"], best["new draw"] + best["new encode"]
    print(f"total per card: old {old:.2f} ms, new {new:.2f} ms, ratio old/new {old / new:.2f}")
    sizes = [len(draw.card_png(t, k, FOOTER, "Prefill")) for t, k in jobs[:50]]
    old_sizes = [len(encode_png(old_image(t, k, FOOTER, "Prefill"))) for t, k in jobs[:50]]
    print(f"PNG bytes, mean of 50 cards: old {statistics.mean(old_sizes):.0f}, new {statistics.mean(sizes):.0f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
