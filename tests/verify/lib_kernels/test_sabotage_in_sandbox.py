"""A sabotaged ``verify/_lib`` kernel fails its question's verification in the real sandbox, and editing the
module is enough to make a cached, passing script run again (the cache key covers imported modules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..kernel_repo import repo_with, run

pytestmark = [pytest.mark.slow]

SABOTAGE = [
    # holes and the tail are no longer masked
    (
        "paged-kv-gather-block-table",
        "paged_gather_kernel.py",
        "ok = in_out & (t < tl.load(seq_lens_ptr + b)) & (phys >= 0)",
        "ok = in_out",
    ),
    # the recursive residual replaced by the single-draft one in the kernel everybody calls
    ("tree-verification-attention-mask", "tree_kernels.py", "if SINGLE_DRAFT:", "if True:"),
]


@pytest.mark.parametrize(("slug", "module", "good", "bad"), SABOTAGE, ids=[s[0] for s in SABOTAGE])
def test_a_sabotaged_lib_kernel_fails_its_script(tmp_path: Path, slug: str, module: str, good: str, bad: str) -> None:
    root = repo_with(tmp_path, slug)
    if slug == SABOTAGE[0][0]:  # once: a passing, cached run first, so the edit alone must trigger the rerun
        first, _ = run(root, slug)
        assert first["outcome"] == "pass", first["problems"]
    path = root / "verify" / "_lib" / module
    text = path.read_text(encoding="utf-8")
    assert text.count(good) == 1
    path.write_text(text.replace(good, bad), encoding="utf-8")
    result, record = run(root, slug)
    assert result["outcome"] == "fail"
    main = [k for k in record["kernels"] if k.get("kind") == "triton" and not k["expect_mismatch"]]
    assert main and not all(k["ok"] for k in main)
    assert any(p["code"] == "verify-check-failed" for p in result["problems"])
