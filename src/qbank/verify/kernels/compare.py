"""A kernel's output against its reference: tensors, or tuples/lists of them compared element-wise (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Comparison:
    """How one kernel's output compared with its reference."""

    ok: bool
    rtol: float
    atol: float
    max_abs_err: float | None
    """The largest |got - reference| over positions finite in both; None when shapes or counts differ."""
    dtype: str
    detail: str
    """Empty when ok; else what differed first (shape, dtype class, count of outputs, values)."""


def flatten(out: Any) -> list[Any]:
    """The tensors of an output: a tensor, or a (nested) tuple/list of them; anything else as a tensor."""
    import torch

    if isinstance(out, (tuple, list)):
        return [t for item in out for t in flatten(item)]
    with torch._C.DisableTorchFunctionSubclass():  # a subclass could answer allclose itself
        return [torch.as_tensor(out).detach().to("cpu").as_subclass(torch.Tensor)]


def default_tolerances(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) by dtype, as ``kernel_check``: float32 1e-5/1e-6, float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5,
    float64 1e-7/1e-9, integers and bools exact."""
    import torch

    return {
        torch.float32: (1e-5, 1e-6),
        torch.float64: (1e-7, 1e-9),
        torch.float16: (1e-3, 1e-5),
        torch.bfloat16: (1.6e-2, 1e-5),
    }.get(dtype, (0.0, 0.0))


def _one(exp: Any, got: Any, rtol: float | None, atol: float | None) -> tuple[bool, float, float, float | None, str]:
    import torch

    r, a = default_tolerances(exp.dtype)
    rt, at = (rtol if rtol is not None else r), (atol if atol is not None else a)
    if exp.shape != got.shape:
        return False, rt, at, None, f"shape {tuple(got.shape)} != reference {tuple(exp.shape)}"
    if exp.dtype.is_floating_point != got.dtype.is_floating_point and not exp.dtype.is_floating_point:
        return False, rt, at, None, f"dtype {got.dtype} where the reference has {exp.dtype}"
    if exp.numel() == 0:
        return True, rt, at, 0.0, ""
    g = got.to(exp.dtype)
    close = torch.isclose(g, exp, rtol=rt, atol=at, equal_nan=False)
    both = torch.isfinite(g) & torch.isfinite(exp)
    diff = (g.double() - exp.double()).abs()
    err = float(diff[both].max()) if bool(both.any()) else 0.0
    if not bool(close.all()):
        bad = int((~close).sum())
        first = tuple(int(i) for i in (~close).nonzero()[0].tolist())
        return False, rt, at, err, f"{bad} of {exp.numel()} elements differ (first at {first})"
    return True, rt, at, err, ""


def compare(expected: Any, got: Any, rtol: float | None = None, atol: float | None = None) -> Comparison:
    """Compare every tensor of ``got`` with the same-position tensor of ``expected``."""
    exp_ts, got_ts = flatten(expected), flatten(got)
    if len(exp_ts) != len(got_ts):
        return Comparison(
            False, rtol or 0.0, atol or 0.0, None, "", f"{len(got_ts)} outputs, the reference has {len(exp_ts)}"
        )
    ok, details, rt_all, at_all = True, [], 0.0, 0.0
    err: float | None = 0.0
    for i, (e, g) in enumerate(zip(exp_ts, got_ts, strict=True)):
        one_ok, rt, at, one_err, why = _one(e, g, rtol, atol)
        ok = ok and one_ok
        err = None if err is None or one_err is None else max(err, one_err)
        rt_all, at_all = max(rt_all, rt), max(at_all, at)
        if why:
            details.append(f"output {i}: {why}" if len(exp_ts) > 1 else why)
    dtypes = ",".join(sorted({str(e.dtype) for e in exp_ts}))
    return Comparison(ok, rt_all, at_all, err, dtypes, "; ".join(details))
