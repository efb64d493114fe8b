"""Extraction: positions, contexts, markers and what is never read."""

from __future__ import annotations

from qbank.claims import extract, strip_markers


def test_positions_contexts_and_markers() -> None:
    md = (
        "## The numbers\n\n"
        "1. Llama-3.1-70B has 80 layers{=layers} and\n"
        "   8 KV heads.\n\n"
        "> A team of five engineers{!a count in a story}.\n\n"
        "| context | KV (GiB) |\n|---|---|\n| 128K | 40 |\n\n"
        '!!! note "Budget"\n    It takes 5 ms.\n\n'
        "$$\n2^{20} \\times 320\\,\\text{KiB}\n$$\n\n"
        "```python\nx = 42  # 42 is code\n```\n"
    )
    quantities, orphans = extract(md)
    got = [
        (q.line, q.col, " ".join(q.text.split()), q.context, q.marker.body if q.marker else None) for q in quantities
    ]
    assert got == [
        (3, 22, "80 layers", "list_item", "layers"),
        (4, 4, "8 KV heads", "list_item", None),
        (6, 13, "five", "blockquote", "a count in a story"),
        (10, 3, "128K", "table", None),
        (10, 10, "40", "table", None),
        (13, 14, "5 ms", "admonition", None),
        (16, 1, "2^20", "math", None),
        (16, 15, "320 KiB", "math", None),
    ]
    assert orphans == []
    assert quantities[4].found.canonical() == "40 GiB"  # the column header's unit


def test_a_marker_after_no_quantity_is_an_orphan() -> None:
    _quantities, orphans = extract("The cache{=kv} is large, and 8 GPUs hold it.\n")
    assert [(m.line, m.col, m.body) for m in orphans] == [(1, 10, "kv")]


def test_columns_count_characters_not_bytes() -> None:
    quantities, _ = extract("Über µ-bench: ≈ 40 GB\n")
    assert [(q.col, q.found.canonical()) for q in quantities] == [(17, "~40 GB")]


def test_strip_markers_keeps_code() -> None:
    md = "It needs 320 GiB{=kv} and five{!story}; `x{=y}` stays.\n```\na{=b}\n```\n"
    assert strip_markers(md) == "It needs 320 GiB and five; `x{=y}` stays.\n```\na{=b}\n```\n"
