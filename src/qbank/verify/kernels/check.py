"""``triton_check``: a Triton kernel against its PyTorch reference, on the CPU through Triton's interpreter or
compiled on CUDA (timed there). Recorded beside ``kernel_check``'s entries in the script's record."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from . import COMPILED, INTERPRET_ENV, INTERPRETER
from .compare import compare


def _move(x: Any, dev: str) -> Any:
    import torch

    return x.to(dev) if isinstance(x, torch.Tensor) else x


def _sync(dev: str) -> None:
    if dev == "cuda":
        import torch

        torch.cuda.synchronize()


def _count(name: str, value: Any) -> int | None:
    from ..api import VerifyUsageError

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise VerifyUsageError(f"{name}: a positive int computed from the shapes, got {value!r}")
    return int(value)


def triton_check(
    name: str,
    launch: Callable[..., Any],
    reference: Callable[..., Any],
    *args: Any,
    bytes_moved: int | None = None,
    flops: int | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    expect_mismatch: bool = False,
) -> bool:
    """Run ``launch(*args)`` (a ``@triton.jit`` kernel's launch) on the selected device and compare its
    output with ``reference(*args)`` run on the CPU with PyTorch; tuples/lists are compared element-wise.

    On the CPU the kernel runs through Triton's interpreter (path ``triton-interpreter``); nothing is timed
    there. On CUDA it is compiled (``triton-compiled``) and timed with ``triton.testing.do_bench`` beside the
    reference on the same GPU; ``bytes_moved`` and ``flops`` (ints the script computes from the shapes) give
    the achieved bandwidth, its fraction of the device's datasheet peak, and FLOP/s.
    Tolerances default by dtype as in ``kernel_check``. ``expect_mismatch=True`` marks a deliberately broken
    kernel: its check passes when the outputs differ (the page lists it as broken on purpose).
    Returns whether the check passed.
    """
    from .. import api

    line = api._caller_line()
    if not name or not name.replace("-", "_").isidentifier():
        raise api.VerifyUsageError(f"{name!r}: a kernel check's name is an identifier")
    moved, work = _count("bytes_moved", bytes_moved), _count("flops", flops)
    dev = api.device()
    # QBANK_FAKE_CUDA (the runner's test hook) stands the CPU in for a GPU: the kernel still runs through the
    # interpreter and the record says so; only a real GPU gives the compiled path and timings
    compiled = dev == "cuda" and not os.environ.get("QBANK_FAKE_CUDA")
    if not compiled and os.environ.get(INTERPRET_ENV) != "1":
        raise api.VerifyUsageError(
            f"{name}: a Triton kernel on the CPU needs {INTERPRET_ENV}=1 before the kernel is decorated "
            "(qbank verify sets it; a script run by hand needs it in its environment)"
        )
    run_on = "cuda" if compiled else "cpu"
    expected = reference(*[_move(a, "cpu") for a in args])
    dev_args = [_move(a, run_on) for a in args]
    start = time.perf_counter()
    got = launch(*dev_args)
    _sync(run_on)
    seconds = time.perf_counter() - start
    result = compare(expected, got, rtol, atol)
    entry: dict[str, Any] = {
        "name": name,
        "device": dev,
        "ok": result.ok != expect_mismatch,
        "matched": result.ok,
        "expect_mismatch": expect_mismatch,
        "needs_gpu": False,
        "line": line,
        "rtol": result.rtol,
        "atol": result.atol,
        "max_abs_err": result.max_abs_err,
        "seconds": seconds,
        "dtype": result.dtype,
        "kind": "triton",
        "path": COMPILED if compiled else INTERPRETER,
        "device_name": _device_name(compiled),
        "bytes_moved": moved,
        "flops": work,
    }
    if result.detail:
        entry["detail"] = result.detail[:500]
    if compiled and not expect_mismatch:  # a broken-on-purpose kernel's speed means nothing
        from .bench import measure
        from .peak import hbm_peak

        peak = hbm_peak(entry["device_name"])
        entry["timing"] = measure(lambda: launch(*dev_args), lambda: reference(*dev_args), moved, work, peak)
    api._add_kernel(entry)
    where = "compiled on CUDA" if compiled else "through the Triton interpreter"
    tol = f"rtol={result.rtol}, atol={result.atol}"
    if expect_mismatch:
        message = f"kernel {name} ({where}), broken on purpose, differs from its CPU reference ({tol})"
    else:
        message = f"kernel {name} ({where}) matches its CPU reference ({tol})"
        if result.detail:
            message += f": {result.detail[:200]}"
    api._add_check(api.Check(message, entry["ok"], line, api._next_seq()))
    return bool(entry["ok"])


def _device_name(compiled: bool) -> str:
    if not compiled:
        return "CPU"
    import torch

    return str(torch.cuda.get_device_name(0))
