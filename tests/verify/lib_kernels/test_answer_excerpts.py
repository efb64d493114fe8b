"""The Triton code an answer shows is the code the checks run: every line of a fenced block that uses
``tl.`` must appear in one of the ``verify/_lib`` kernel modules its verification script imports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ANSWERS = {
    "json-schema-token-mask": ["bitmask_kernel"],
    "tree-verification-attention-mask": ["tree_kernels"],
    "paged-kv-gather-block-table": ["paged_gather_kernel"],
    "fp8-kv-cache-quantize-kernel": ["fp8_kv_kernel"],
    "fused-silu-and-mul-kernel": ["silu_mul_kernel"],
}
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def triton_blocks(text: str) -> list[str]:
    return [b for b in FENCE.findall(text) if "tl." in b]


def normalise(line: str) -> str:
    return re.sub(r"\s+", " ", line.split("#")[0]).strip()


@pytest.mark.parametrize("slug", sorted(ANSWERS))
def test_shown_kernel_lines_are_in_the_checked_module(slug: str) -> None:
    answer = (REPO / "answers" / f"{slug}.md").read_text()
    script = (REPO / "verify" / f"{slug}.py").read_text()
    source = set()
    for module in ANSWERS[slug]:
        assert re.search(rf"^from {module} import", script, re.M), f"{slug}.py does not import {module}"
        source |= {normalise(x) for x in (REPO / "verify" / "_lib" / f"{module}.py").read_text().splitlines()}
    blocks = triton_blocks(answer)
    assert blocks, f"{slug}: no Triton code shown"
    shown = [normalise(x) for b in blocks for x in b.splitlines() if normalise(x)]
    missing = [x for x in shown if x not in source]
    assert not missing, f"{slug}: lines shown but not in the checked kernel: {missing}"


def test_an_edited_excerpt_is_caught() -> None:
    text = "```python\nx = tl.load(p)  # fine\ny = tl.store(q, x * 2)\n```\n"
    source = {normalise("x = tl.load(p)")}
    shown = [normalise(x) for b in triton_blocks(text) for x in b.splitlines() if normalise(x)]
    assert [x for x in shown if x not in source] == ["y = tl.store(q, x * 2)"]
