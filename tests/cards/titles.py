"""Titles for the card tests: generated (seeded) and chosen by hand to cover what a title can hold."""

from __future__ import annotations

import random

VOCABULARY = ("KV cache paged attention block size prefill decode batch H100 H200 FP8 tensor parallel speculative "
         "decoding draft model acceptance rate throughput latency memory bandwidth roofline FlashAttention "
         "quantization AWQ GPTQ int4 weights activations MoE experts routing all-to-all NVLink context 128k "
         "tokens per second why does how would you estimate the of for at with on an a in fragmentation offload "
         "office efficient fluffy Wafer Type AVA L'année naïve café — “quoted” (x) 3.5× ≤ µs")
WORDS = VOCABULARY.split()

CHOSEN = [
    "A",
    "KV cache for one request at 128k context",
    "office effluent ffi fl ff ffl — efficient fluffy affine fluffiest",
    "AVAToWa Type Ta Te Vo LT L’année",
    "e\u0301e\u0300 a\u0323\u0302 combining marks z\u0301\u0302\u0303\u0304 over\u0308",
    "Ωμέγα Привет мир Ελληνικά ß Æ Ø ǅ",
    "日本語のタイトル 中文 한국어 emoji 😀 👨\u200d👩\u200d👧 ok\ufe0f ❤️",
    "שלום world مرحبا 123 mixed direction",
    "x" * 200,
    "fi" + "x" * 60 + " a word too long to search for its ligature",
    "Supercalifragilisticexpialidocious" * 3 + " then short words after it",
    "Wwwwwwwwwwg Wwwwwwwwwwg Wwwwwwwwwwg Wwwwwwwwwgy",  # four lines at 64 px: the last one's descenders
    "tab\there and\u00a0no-break space, zero\u200bwidth",
    "  σ φ-η≯ ≮ ≠ ∉ ≯≯ ψ≯ω",  # characters the font lacks that shaping decomposes into two glyphs
    "a≯b ≮c ≯≯≯ x≯y≮z ≰ ≱ ≢ ∄ ∌ ⊄ ⊅ ⊈ ⊉ q≯ r≯ s≯ t≯ u≯ v≯ w≯",
    "ภาษาไทย ำ ที่ น้ำ",  # scripts shaped in context
    "हिन्दी ि कि",
    "a mark after a space: a \u0303b, an isolated \u0301",
    "word " * 80,
]


def generated(count: int, seed: int) -> list[str]:
    """Short to much-too-long titles of the corpus' vocabulary."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.choice((1, 3, 6, 9, 12, 16, 30)))).capitalize() + "?"
            for _ in range(count)]
