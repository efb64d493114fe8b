"""Verification: the script API (``given``, ``claim``, ``check``, ``fact``, ``kernel_check``) and the runner."""

from __future__ import annotations

from .api import API_VERSION, check, claim, device, fact, given, kernel_check, timing

__all__ = ["API_VERSION", "check", "claim", "device", "fact", "given", "kernel_check", "timing"]
