"""A hostile, corrupted or unreadable epoch record: the keyslot step says what is wrong and writes nothing.

Run as its user runs it: the command line (`qbank paywall keyslots`), exit 1 with one `qbank: error:` line
naming the record, no traceback, and the site, the sealed release and the record byte-identical afterwards.
The unreadable record is tried as an unprivileged user (root reads a mode-000 file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from qbank.cli import main
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen

from ..capabilities import require
from ..verify.attacks.conftest import reachable_prefix
from .fake_build import fake_build, site_files
from .test_attack import BEFORE, TODAY


def snapshot(base: Path) -> dict[str, bytes]:
    """Every file under ``base`` except the ledger (SQLite may touch it): path -> bytes."""
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*")
            if p.is_file() and not p.name.startswith("ledger")}


@pytest.fixture
def deploy_env() -> Iterator[Path]:
    """A built site, its sealed release, a ledger and an identity, in a folder any user may enter."""
    base = Path(tempfile.mkdtemp(prefix="qbank-epoch-record-"))
    try:
        base.chmod(0o755)
        with open_ledger(base / "ledger.sqlite3") as book:
            (k,) = book.mint(1)
            book.sell(k, TODAY, "a@example.com")
        _key, pub, _ = keygen(base / "identity.key")
        fake_build(base, BEFORE, pub)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def args(base: Path, record: Path) -> list[str]:
    (sealed,) = (base / ".qbank/release").glob("*.sealed.json")
    return ["paywall", "keyslots", "--site", str(base / "site"), "--release", str(sealed),
            "--ledger", str(base / "ledger.sqlite3"), "--epoch", str(record), "--today", TODAY.isoformat()]


HOSTILE = {
    "not-json": b"{\n  \"format\": 1,\n  oops\n}\n",
    "a-list": b"[1, 2, 3]\n",
    "another-format": b'{"format": 99}\n',
    "no-sealed-key": b'{"format": 1, "epoch": "ab", "began": "2026-12-01", "readers": []}\n',
    "readers-a-string": b"",  # filled in by the test: a valid record whose readers are one string
    "began-not-a-date": b"",  # likewise, with began = "yesterday"
    "not-utf8": b"\xff\xfe\x00garbage",
}


def valid_record(base: Path, record: Path) -> dict[str, object]:
    """A real record, written by a real keyslot run on a copy of the site."""
    copy = base / "copy"
    shutil.copytree(base, copy, ignore=shutil.ignore_patterns("copy"))
    assert main(args(copy, record)) == 0
    doc: dict[str, object] = json.loads(record.read_bytes())
    shutil.rmtree(copy)
    return doc


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_record_is_an_error_and_nothing_is_written(
    deploy_env: Path, case: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = deploy_env
    monkeypatch.setenv("QBANK_RELEASE_IDENTITY_FILE", str(base / "identity.key"))
    record = base / "private" / "epoch.json"
    record.parent.mkdir()
    body = HOSTILE[case]
    if not body:
        doc = valid_record(base, record)
        doc["readers" if case == "readers-a-string" else "began"] = "abc" if case == "readers-a-string" else "yesterday"
        body = json.dumps(doc).encode()
    record.write_bytes(body)
    capsys.readouterr()
    before = snapshot(base)
    code = main(args(base, record))
    out = capsys.readouterr()
    assert code == 1, out
    assert out.err.startswith(f"qbank: error: keyslots: {record}") and "Traceback" not in out.err, out.err
    assert snapshot(base) == before


def test_a_record_path_that_is_a_folder_is_an_error_and_nothing_is_written(
    deploy_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = deploy_env
    monkeypatch.setenv("QBANK_RELEASE_IDENTITY_FILE", str(base / "identity.key"))
    record = base / "private" / "epoch.json"
    record.mkdir(parents=True)
    before = snapshot(base)
    code = main(args(base, record))
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err, out
    assert str(record) in out.err
    assert snapshot(base) == before and record.is_dir() and not any(record.iterdir())


def test_an_unreadable_record_is_an_error_for_an_unprivileged_user(deploy_env: Path) -> None:
    """As uid 65534: a record the deploy user cannot read is not "no epoch yet" (that would re-key
    silently and overwrite it): an error naming it, exit 1, nothing written."""
    require("root", "setpriv")
    base = deploy_env
    record = base / "private" / "epoch.json"
    record.parent.mkdir()
    record.write_bytes(b'{"format": 1}\n')
    subprocess.run(["chmod", "-R", "a+rwX", str(base)], check=True)
    record.chmod(0o000)
    record.parent.chmod(0o755)
    before = snapshot(base)
    as_nobody = [*reachable_prefix(), "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {**os.environ, "HOME": str(base), "QBANK_RELEASE_IDENTITY_FILE": str(base / "identity.key")}
    proc = subprocess.run([*as_nobody, sys.executable, "-m", "qbank.cli", *args(base, record)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert f"qbank: error: keyslots: {record}" in proc.stderr, proc.stderr
    assert snapshot(base) == before
    assert site_files(base / "site") == {k[5:]: v for k, v in before.items() if k.startswith("site/")}
