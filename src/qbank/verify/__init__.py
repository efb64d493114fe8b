"""Verification: the script API (``given``, ``claim``, ``check``) and, beside it, the runner."""

from __future__ import annotations

from .api import API_VERSION, check, claim, given

__all__ = ["API_VERSION", "check", "claim", "given"]
