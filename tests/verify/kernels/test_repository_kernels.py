"""Every Triton kernel of the repository, through the interpreter in the sandbox, as CI runs it: each script
that calls ``triton_check`` passes, every kernel check says it ran through the interpreter, its broken
variants are there and differ; and sabotaging a real kernel turns the verdict into a failure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ...conftest import REPO
from ..kernel_repo import repo_with, run

pytestmark = [pytest.mark.slow]

TRITON_SCRIPTS = sorted(p.stem for p in (REPO / "verify").glob("*.py") if "triton_check(" in p.read_text("utf-8"))
# one sabotage per kernel this repository's own tests own: (slug, text in the kernel, its broken replacement)
SABOTAGE = [
    # the row keeps accepting after its first rejection
    ("speculative-sampling-kernel", "if BUG != 2:\n            alive = alive & accept", "alive = alive"),
    # vLLM's non-strict accept test on a float32 uniform: u = 0.0 accepts a token the target gave no mass
    ("speculative-sampling-kernel", "accept = (q_tok > 0) & (u * q_tok < p_tok)\n", "accept = (q_tok > 0) & (p_tok >= u * q_tok)\n"),
    # top-p on the full softmax
    ("batched-top-k-top-p-kernels", "    live = keep_k\n", "    live = valid\n"),
]


def test_the_repository_has_triton_kernels() -> None:
    assert {"speculative-sampling-kernel", "batched-top-k-top-p-kernels"} <= set(TRITON_SCRIPTS)


@pytest.mark.parametrize("slug", TRITON_SCRIPTS)
def test_every_kernel_passes_through_the_interpreter(tmp_path: Path, slug: str) -> None:
    result, record = run(repo_with(tmp_path, slug), slug)
    assert result["outcome"] == "pass", result["problems"]
    kernels = [k for k in record["kernels"] if k.get("kind") == "triton"]
    assert kernels and all(k["path"] == "triton-interpreter" and k["device_name"] == "CPU" for k in kernels)
    assert all(k["ok"] for k in kernels) and all("timing" not in k for k in kernels)
    broken = [k for k in kernels if k["expect_mismatch"]]
    assert broken and all(k["matched"] is False for k in broken)  # each broken variant really differs
    told = [k for k in result["kernels"] if k.get("kind") == "triton"]  # scripts may keep plain kernel_checks too
    assert len(told) == len(kernels) and all(k["path"] == "triton-interpreter" for k in told)  # what the page is told


@pytest.mark.parametrize(("slug", "good", "bad"), SABOTAGE, ids=[f"{s[0]}-{i}" for i, s in enumerate(SABOTAGE)])
def test_a_sabotaged_kernel_fails_its_check(tmp_path: Path, slug: str, good: str, bad: str) -> None:
    root = repo_with(tmp_path, slug)
    path = root / "verify" / f"{slug}.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(good) == 1
    path.write_text(text.replace(good, bad), encoding="utf-8")
    result, record = run(root, slug)
    assert result["outcome"] == "fail"
    main = [k for k in record["kernels"] if not k["expect_mismatch"]]
    assert main and not all(k["ok"] for k in main)
    assert any(re.search(r"verify-check-failed", p["code"]) for p in result["problems"])
