"""Comparing a kernel's output with its reference: dtype-aware, element-wise over tuples, every mismatch kind."""

from __future__ import annotations

import torch

from qbank.verify.kernels.compare import compare


def test_equal_tensors_and_tuples_pass() -> None:
    a = torch.arange(6).view(2, 3)
    r = compare((a, a.float()), (a.clone(), a.float() + 1e-7))
    assert r.ok and r.detail == "" and r.max_abs_err is not None and r.max_abs_err < 1e-6
    assert r.dtype == "torch.float32,torch.int64"


def test_integers_are_exact() -> None:
    r = compare(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
    assert not r.ok and "1 of 3 elements differ (first at (2,))" in r.detail and r.max_abs_err == 1.0


def test_float_tolerance_by_dtype() -> None:
    x = torch.ones(4)
    assert compare(x, x + 5e-6).ok  # float32: rtol 1e-5
    assert not compare(x, x + 1e-4).ok
    assert compare(x.half(), (x + 5e-4).half()).ok  # float16: rtol 1e-3
    assert not compare(x, x + 1e-4, rtol=1e-6, atol=0.0).ok


def test_infinities_must_match_and_nan_never_does() -> None:
    ref = torch.tensor([1.0, float("-inf")])
    assert compare(ref, ref.clone()).ok
    assert not compare(ref, torch.tensor([1.0, 0.0])).ok
    assert not compare(torch.tensor([float("nan")]), torch.tensor([float("nan")])).ok


def test_shape_count_and_dtype_class_mismatches() -> None:
    r = compare(torch.zeros(3), torch.zeros(4))
    assert not r.ok and r.max_abs_err is None and "shape (4,) != reference (3,)" in r.detail
    r = compare((torch.zeros(3), torch.zeros(3)), torch.zeros(3))
    assert not r.ok and "1 outputs, the reference has 2" in r.detail
    r = compare(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
    assert not r.ok and "dtype" in r.detail
