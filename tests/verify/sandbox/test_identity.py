"""Who a script runs as: root drops to a fresh uid from a high range, anyone else runs bwrap as itself."""

from __future__ import annotations

import pytest

from qbank.verify.sandbox import identity


@pytest.mark.parametrize(("euid", "root"), [(0, True), (1, False), (1000, False), (65534, False)])
def test_only_uid_0_is_root(monkeypatch: pytest.MonkeyPatch, euid: int, root: bool) -> None:
    monkeypatch.setattr(identity.os, "geteuid", lambda: euid)
    assert identity.is_root() is root


def test_root_gets_a_fresh_uid_from_the_high_range(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def randbelow(n: int) -> int:
        asked.append(n)
        return n - 1 if len(asked) == 2 else 0

    monkeypatch.setattr(identity.os, "geteuid", lambda: 0)
    monkeypatch.setattr(identity.secrets, "randbelow", randbelow)
    low, high = identity.job_uid(), identity.job_uid()
    # 0x5A000000 .. 0x5AFFFFFE: far above /etc/passwd (65534 is nobody), below overflowuid and -1 (2**32 - 1)
    assert (low, high) == (0x5A000000, 0x5AFFFFFE) and asked == [0x00FFFFFF, 0x00FFFFFF]


def test_anyone_else_runs_as_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity.os, "geteuid", lambda: 1000)
    assert identity.job_uid() is None and identity.drop_prefix(None) == []


def test_the_drop_prefix() -> None:
    assert identity.drop_prefix(1509949440) == [
        "/usr/bin/setpriv",
        "--reuid=1509949440",
        "--regid=1509949440",
        "--clear-groups",
        "--no-new-privs",
        "--",
    ]
