"""The Triton code an answer shows is the code the checks run: where a script takes its kernels from a
``verify/_lib`` module, every line of the answer's fenced blocks that use ``tl.`` must be a line of the
script or of the modules it imports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FENCE = re.compile(r"```python\n(.*?)```", re.S)
IMPORT = re.compile(r"^(?:from (\w+) import|import (\w+))", re.M)


def triton_blocks(text: str) -> list[str]:
    return [b for b in FENCE.findall(text) if "tl." in b]


def normalise(line: str) -> str:
    return re.sub(r"\s+", " ", line.split("#")[0]).strip()


def checked_sources(script: Path) -> list[Path]:
    """The script and the verify/_lib modules it imports."""
    text = script.read_text(encoding="utf-8")
    lib = REPO / "verify" / "_lib"
    names = {a or b for a, b in IMPORT.findall(text)}
    return [script, *sorted(lib / f"{n}.py" for n in names if (lib / f"{n}.py").exists())]


def uses_lib_kernels(slug: str) -> bool:
    """Whether the script imports a verify/_lib module that defines a Triton kernel."""
    modules = checked_sources(REPO / "verify" / f"{slug}.py")[1:]
    return any("@triton.jit" in m.read_text(encoding="utf-8") for m in modules)


def triton_answers() -> list[str]:
    """Slugs whose answer shows Triton code and whose script takes its kernels from verify/_lib."""
    answers = sorted((REPO / "answers").glob("*.md"))
    return [p.stem for p in answers if triton_blocks(p.read_text(encoding="utf-8")) and uses_lib_kernels(p.stem)]


def missing_lines(answer: str, sources: list[str]) -> list[str]:
    source = {normalise(x) for text in sources for x in text.splitlines()}
    shown = [normalise(x) for b in triton_blocks(answer) for x in b.splitlines() if normalise(x)]
    return [x for x in shown if x not in source]


def test_the_kernel_answers_are_covered() -> None:
    assert {
        "json-schema-token-mask",
        "tree-verification-attention-mask",
        "paged-kv-gather-block-table",
        "fp8-kv-cache-quantize-kernel",
        "fused-silu-and-mul-kernel",
    } <= set(triton_answers())


@pytest.mark.parametrize("slug", triton_answers())
def test_shown_kernel_lines_are_in_the_checked_code(slug: str) -> None:
    sources = checked_sources(REPO / "verify" / f"{slug}.py")
    missing = missing_lines(
        (REPO / "answers" / f"{slug}.md").read_text(encoding="utf-8"), [p.read_text(encoding="utf-8") for p in sources]
    )
    assert not missing, f"{slug}: lines shown but not in {[str(p.relative_to(REPO)) for p in sources]}: {missing}"


def test_an_edited_excerpt_is_caught() -> None:
    answer = "```python\nx = tl.load(p)  # fine\ny = tl.store(q, x * 2)\n```\n"
    assert missing_lines(answer, ["x = tl.load(p)\ny = tl.store(q, x)\n"]) == ["y = tl.store(q, x * 2)"]
