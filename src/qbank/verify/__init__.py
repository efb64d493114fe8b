"""Verification: the script API (``given``, ``claim``, ``check``, ``fact``, ``kernel_check``, ``triton_check``)
and the runner.

The API is loaded on first use (PEP 562), so tools that only read results (a warm ``qbank verify``,
the claims checker) do not pay for it.
"""

from __future__ import annotations

from .version import API_VERSION

TYPE_CHECKING = False  # not typing's: a warm `qbank verify` imports this package and nothing of typing
if TYPE_CHECKING:
    from typing import Any

    from .api import check, claim, device, fact, given, kernel_check, timing
    from .kernels.check import triton_check

__all__ = ["API_VERSION", "check", "claim", "device", "fact", "given", "kernel_check", "timing", "triton_check"]


def __getattr__(name: str) -> Any:
    if name == "triton_check":
        from .kernels.check import triton_check

        return triton_check
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'qbank.verify' has no attribute {name!r}")
