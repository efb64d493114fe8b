"""Whole-file writes: the new bytes or the old file, the requested mode, no temporary file left behind."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from qbank.atomic import write_atomic


def test_writes_the_bytes_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.json"
    write_atomic(target, b"first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.json"]


def test_mode_applies_even_over_a_stale_temporary_file(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        target = tmp_path / "secret"
        # a crashed writer of this process and thread left its temporary file, world-readable
        stale = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        stale.write_bytes(b"old")
        stale.chmod(0o666)
        write_atomic(target, b"key", 0o600)
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        write_atomic(tmp_path / "public", b"page")
        assert stat.S_IMODE((tmp_path / "public").stat().st_mode) == 0o644
    finally:
        os.umask(old)
    assert not stale.exists()


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "index.json"
    target.write_bytes(b"old")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.json"]
