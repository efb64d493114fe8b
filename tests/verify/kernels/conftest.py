"""Triton through its interpreter in-process: TRITON_INTERPRET=1 before any kernel is decorated, and a fresh
script record per test (``triton_check`` writes to the API's record as a script's calls would)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from qbank.verify import api


@pytest.fixture
def record(monkeypatch: pytest.MonkeyPatch) -> Iterator[api.Record]:
    """The script record ``triton_check`` writes to, on the CPU with the interpreter in force."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("QBANK_DEVICE", "cpu")
    monkeypatch.delenv("QBANK_FAKE_CUDA", raising=False)
    fresh = api.Record()
    monkeypatch.setattr(api, "RECORD", fresh)
    yield fresh
