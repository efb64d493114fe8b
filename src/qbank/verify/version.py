"""The script API's version: part of every cache key; bump it when the record format or semantics change."""

from __future__ import annotations

API_VERSION = 3
"""2: declarations carry ``seq`` and the record a declaration chain; the static check gates every run.
3: ``triton_check`` (Triton kernels: interpreter on the CPU, compiled and timed on CUDA); triton's members
reachable from scripts are an allowlist."""
