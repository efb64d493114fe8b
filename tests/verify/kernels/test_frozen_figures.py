"""GPU figures of Triton kernels travel only in frozen, signed results: a (fake) GPU run freezes the kernel
entries with their fields; a CPU run shows a signed compiled run's timing beside its own interpreter check,
refuses a tampered file and drops a stale one. Signed with a key made in the test (tests/verify/test_frozen.py
does the same for kernel_check)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qbank.render.derivation import from_result
from qbank.render.kernel_table import kernel_table
from qbank.verify import frozen, store
from qbank.verify.engine import VerifyConfig, verify
from qbank.verify.runner import RunOptions

from ..conftest import add_script

SCRIPT = """# %%
import torch
import triton
import triton.language as tl

from qbank.verify import claim, triton_check


@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    y = torch.empty_like(x)
    double[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)
    return y


x = torch.arange(40, dtype=torch.float32)
triton_check("double", launch, lambda t: 2 * t, x, bytes_moved=x.numel() * 8)
claim("elements", x.numel())
"""
TIMING = {
    "ms": 0.004, "ref_ms": 0.012, "speedup_vs_ref": 3.0, "bytes_moved": 320, "flops": None,
    "bytes_per_s": 8.0e7, "flop_per_s": None, "peak_fact": "h200_sxm.hbm_bandwidth",
    "peak_bytes_per_s": 4.8e12, "peak_fraction": 8.0e7 / 4.8e12, "ref_error": None,
}  # fmt: skip


@pytest.fixture
def key(vrepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runner.key"
    frozen.generate_key(path, vrepo)
    monkeypatch.setenv(frozen.SIGNING_ENV, str(path))
    add_script(vrepo, "triton-double", SCRIPT)
    return path


def run(root: Path, device: str = "cpu") -> dict[str, Any]:
    opts = RunOptions(fake_cuda="Fake H200") if device == "cuda" else RunOptions()
    return verify(root, VerifyConfig(slugs=["triton-double"], device=device, options=opts)).results[0]


def sign_compiled(root: Path, key: Path, input_hash: str, ok: bool = True) -> Path:
    """What a real GPU run freezes: the compiled path, the GPU's name and the measured figures, signed."""
    kernel = {"name": "double", "ok": ok, "line": 21, "kind": "triton", "path": "triton-compiled",
              "device_name": "NVIDIA H200", "matched": ok, "expect_mismatch": False, "timing": TIMING}  # fmt: skip
    stamp = {"gpu": "NVIDIA H200", "capability": "9.0", "driver": "x", "torch": "2.13.0", "cuda": "12.9"}
    body = {"slug": "triton-double", "input_hash": input_hash, "ran_at": "2026-12-01T10:00:00Z", "stamp": stamp,
            "kernels": [kernel]}  # fmt: skip
    path = root / frozen.frozen_rel("triton-double")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(frozen.sign(body, frozen.load_signing_key(str(key)))), encoding="utf-8")
    return path


def test_interpreter_on_the_cpu_and_the_fake_gpu_freezes_it_as_such(vrepo: Path, key: Path) -> None:
    result = run(vrepo)
    assert result["outcome"] == "pass", result["problems"]
    (k,) = result["kernels"]
    assert (k["path"], k["device_name"], k["kind"]) == ("triton-interpreter", "CPU", "triton") and "gpu" not in k
    # the fake GPU is the CPU: the frozen entry keeps every Triton field and says interpreter, never compiled
    assert run(vrepo, "cuda")["outcome"] == "pass"
    data = json.loads((vrepo / frozen.frozen_rel("triton-double")).read_text())
    (fk,) = data["kernels"]
    assert (fk["path"], fk["kind"], fk["bytes_moved"], fk["matched"]) == ("triton-interpreter", "triton", 320, True)
    assert frozen.check_signature(vrepo, "triton-double", data) is None
    # a CPU build shows no speed from it: nothing there ran compiled
    result = run(vrepo)
    assert result["outcome"] == "pass" and "gpu" not in result["kernels"][0]


def test_a_signed_compiled_run_adds_its_figures_and_the_page_keeps_the_paths_apart(vrepo: Path, key: Path) -> None:
    run(vrepo)
    entry = store.read_entry(vrepo, "triton-double")
    assert entry is not None
    sign_compiled(vrepo, key, entry["input_hash"])
    result = run(vrepo)
    assert result["cache"] == "miss" and result["reason"] == "frozen GPU result changed"
    assert result["outcome"] == "pass" and result["problems"] == []
    gpu = result["kernels"][0]["gpu"]
    assert gpu["device_name"] == "NVIDIA H200" and gpu["timing"]["ms"] == 0.004
    rows = kernel_table(from_result(vrepo, result).kernels)
    assert [c.strip() for c in rows[2].split("|")[1:4]] == ["double", "Triton interpreter (CPU)", "pass"]
    assert "compiled, NVIDIA H200" in rows[3] and "0.004 ms" in rows[3] and "80 MB/s" in rows[3]
    assert "0.0017% of the 4.8 TB/s datasheet peak" in rows[3] and "PyTorch reference 0.012 ms (3.0×" in rows[3]
    assert "ms" not in rows[2].split("|")[4]  # the interpreter row carries no speed


def test_tampered_stale_and_failed_gpu_runs(vrepo: Path, key: Path) -> None:
    run(vrepo)
    entry = store.read_entry(vrepo, "triton-double")
    assert entry is not None
    path = sign_compiled(vrepo, key, entry["input_hash"])
    data = json.loads(path.read_text())
    data["kernels"][0]["timing"]["ms"] = 0.001  # a faster kernel, claimed after signing
    path.write_text(json.dumps(data))
    result = run(vrepo)
    assert result["outcome"] == "error" and [p["code"] for p in result["problems"]] == ["verify-frozen-bad-signature"]
    assert "gpu" not in result["kernels"][0]

    sign_compiled(vrepo, key, "0" * 64)  # measured for other inputs
    result = run(vrepo)
    assert result["outcome"] == "pass" and [p["code"] for p in result["problems"]] == ["verify-gpu-figures-stale"]
    assert "gpu" not in result["kernels"][0]

    sign_compiled(vrepo, key, entry["input_hash"], ok=False)
    result = run(vrepo)
    assert result["outcome"] == "fail" and [p["code"] for p in result["problems"]] == ["verify-check-failed"]
