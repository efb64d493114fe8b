"""``triton_check`` on the CPU through Triton's interpreter: a right kernel passes, a broken one fails, and
what is recorded says where it ran; the GPU figures' arithmetic and the datasheet peak from the fact base."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from qbank.verify import api, triton_check
from qbank.verify.kernels.bench import figures, measure
from qbank.verify.kernels.peak import fact_group, hbm_peak


def scale_kernel(broken: bool = False) -> Any:
    """A tiny kernel, decorated now (so after the fixture set TRITON_INTERPRET): y = 2x (+1 when broken)."""
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(x_ptr, y_ptr, n, BROKEN: tl.constexpr, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        y = x * 2.0
        if BROKEN:
            y = tl.where(offs == n - 1, y + 1.0, y)  # one element wrong: the check must see it
        tl.store(y_ptr + offs, y, mask=offs < n)

    def launch(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), BROKEN=broken, BLOCK=16)
        return y, x.sum().reshape(1)

    return launch


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x * 2.0, x.sum().reshape(1)


def test_a_right_kernel_passes_and_says_where_it_ran(record: api.Record) -> None:
    x = torch.linspace(-1, 1, 37)
    assert triton_check("scale", scale_kernel(), reference, x, bytes_moved=37 * 8) is True
    (entry,) = record.extra["kernels"]
    assert entry["ok"] and entry["matched"] and entry["path"] == "triton-interpreter"
    assert entry["device"] == "cpu" and entry["device_name"] == "CPU" and entry["kind"] == "triton"
    assert entry["bytes_moved"] == 296 and "timing" not in entry  # nothing timed on the CPU
    assert record.checks[-1].ok and "through the Triton interpreter" in record.checks[-1].message


def test_a_broken_kernel_fails(record: api.Record) -> None:
    x = torch.linspace(-1, 1, 37)
    assert triton_check("scale_broken", scale_kernel(broken=True), reference, x) is False
    (entry,) = record.extra["kernels"]
    assert not entry["ok"] and "output 0: 1 of 37 elements differ (first at (36,))" in entry["detail"]
    assert not record.checks[-1].ok


def test_expect_mismatch_passes_only_when_the_kernel_differs(record: api.Record) -> None:
    x = torch.linspace(-1, 1, 37)
    assert triton_check("broken_on_purpose", scale_kernel(True), reference, x, expect_mismatch=True) is True
    assert triton_check("not_broken_after_all", scale_kernel(), reference, x, expect_mismatch=True) is False
    first, second = record.extra["kernels"]
    assert (first["ok"], first["matched"], second["ok"], second["matched"]) == (True, False, False, True)


def test_the_interpreter_must_be_in_force_on_the_cpu(record: api.Record, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET")
    with pytest.raises(api.VerifyUsageError, match="TRITON_INTERPRET=1"):
        triton_check("scale", lambda x: x, reference, torch.ones(2))
    with pytest.raises(api.VerifyUsageError, match="bytes_moved"):
        monkeypatch.setenv("TRITON_INTERPRET", "1")
        triton_check("scale", lambda x: x, reference, torch.ones(2), bytes_moved=-1)


def test_fake_cuda_still_runs_the_interpreter_and_says_so(record: api.Record, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QBANK_DEVICE", "cuda")
    monkeypatch.setenv("QBANK_FAKE_CUDA", "Fake H200")
    assert triton_check("scale", scale_kernel(), reference, torch.ones(5))
    (entry,) = record.extra["kernels"]
    assert (entry["device"], entry["path"], entry["device_name"]) == ("cuda", "triton-interpreter", "CPU")
    assert "timing" not in entry


def test_figures_from_times_and_shapes() -> None:
    peak = hbm_peak("NVIDIA H200")
    assert peak is not None and peak.bytes_per_s == pytest.approx(4.8e12) and peak.fact == "h200_sxm.hbm_bandwidth"
    f = figures(0.5, 2.0, 1_200_000_000, 10**12, peak)
    assert f["bytes_per_s"] == pytest.approx(2.4e12) and f["peak_fraction"] == pytest.approx(0.5)
    assert f["flop_per_s"] == pytest.approx(2e15) and f["speedup_vs_ref"] == pytest.approx(4.0)
    assert figures(0.5, None, None, None, None)["peak_fraction"] is None


def test_measure_uses_its_timer_and_survives_a_reference_that_cannot_run() -> None:
    times = iter([0.25, 1.0])
    out = measure(lambda: None, lambda: None, 10**9, None, hbm_peak("NVIDIA H100 80GB HBM3"), lambda fn: next(times))
    assert out["ms"] == 0.25 and out["ref_ms"] == 1.0 and out["peak_fraction"] == pytest.approx(4e12 / 3.35e12)

    def broken(fn: Any) -> float:
        fn()
        return 1.0

    def ref() -> None:
        raise RuntimeError("needs the CPU")

    out = measure(lambda: None, ref, None, None, None, broken)
    assert out["ref_ms"] is None and out["ref_error"] == "RuntimeError: needs the CPU"


def test_peak_is_never_borrowed_from_another_part() -> None:
    assert fact_group("NVIDIA H100 PCIe") is None and hbm_peak("NVIDIA H100 PCIe") is None
    assert fact_group("NVIDIA H100 80GB HBM3") == "h100_sxm" and fact_group("NVIDIA GeForce RTX 4090") is None
