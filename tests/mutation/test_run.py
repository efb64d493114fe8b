"""`--resume`: a run stopped for time keeps its session and runs only the mutants without a result; a session of
a module that changed since is refused. cosmic-ray and the module's tests are stood in for by a recorder of the
commands the run would start (the session file is cosmic-ray's; only whether it is kept matters here)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mutation import run as mutation_run

RUN = {"timeout_min": 15.0, "timeout_factor": 4.0, "skip": []}


def fresh(out: Path) -> list[list[str]]:
    """A fresh session: the tests unmutated, cosmic-ray's init, the skipped operators marked, then exec."""
    session = str(out / "m.sqlite")
    return [["baseline"], ["cosmic-ray", "init"], ["cr-filter-operators", session], ["cosmic-ray", "exec"]]


def setup(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    module_file = tmp_path / "m.py"
    module_file.write_text("def twice(x):\n    return x + x\n")
    out = tmp_path / "out"
    out.mkdir()
    # an absolute path stays itself under ROOT / path
    return {"name": "m", "path": str(module_file), "tests": ["tests/test_m.py"]}, out


def recorder(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """What the run starts, cosmic-ray's commands by their verb: 'baseline' for the tests unmutated."""
    started: list[list[str]] = []

    def fake(args: Any, **_: Any) -> subprocess.CompletedProcess[str]:
        started.append(["baseline"] if isinstance(args, str) else [Path(args[0]).name, *args[1:2]])
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(mutation_run.subprocess, "run", fake)
    return started


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stopped_session(module: dict[str, Any], out: Path) -> None:
    """A session a run left behind: its results so far and the digest of the module it was made from."""
    (out / "m.sqlite").write_bytes(b"results so far")
    (out / "m.source.sha256").write_text(sha256(Path(module["path"])) + "\n")


def test_a_resumed_run_keeps_its_session_and_only_executes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module, out = setup(tmp_path)
    stopped_session(module, out)
    (out / "m.seconds.json").write_text('{"seconds": 600.0}\n')
    started = recorder(monkeypatch)
    mutation_run.run_module(module, RUN, out, resume=True)
    assert started == [["baseline"], ["cosmic-ray", "exec"]]
    assert (out / "m.sqlite").read_bytes() == b"results so far"
    assert (out / "m.seconds.json").exists()  # the time of the finished runs before it is kept


def test_a_run_without_resume_starts_a_fresh_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module, out = setup(tmp_path)
    stopped_session(module, out)
    (out / "m.seconds.json").write_text('{"seconds": 600.0}\n')
    started = recorder(monkeypatch)
    mutation_run.run_module(module, RUN, out)
    assert started == fresh(out)
    assert not (out / "m.sqlite").exists() and not (out / "m.seconds.json").exists()
    # the digest of the module the new session is made from, for a later --resume
    assert (out / "m.source.sha256").read_text() == sha256(Path(module["path"])) + "\n"


def test_a_resume_without_a_session_starts_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module, out = setup(tmp_path)
    started = recorder(monkeypatch)
    mutation_run.run_module(module, RUN, out, resume=True)
    assert started == fresh(out)
    assert (out / "m.source.sha256").read_text() == sha256(Path(module["path"])) + "\n"


def test_a_resume_refuses_the_session_of_a_module_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module, out = setup(tmp_path)
    stopped_session(module, out)
    Path(module["path"]).write_text("def twice(x):\n    return 2 * x\n")  # the mutants' positions are wrong now
    started = recorder(monkeypatch)
    with pytest.raises(SystemExit, match="changed since the session was made"):
        mutation_run.run_module(module, RUN, out, resume=True)
    assert started == [] and (out / "m.sqlite").read_bytes() == b"results so far"


def test_a_resume_refuses_a_session_that_does_not_record_its_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, out = setup(tmp_path)
    (out / "m.sqlite").write_bytes(b"an older session")
    started = recorder(monkeypatch)
    with pytest.raises(SystemExit, match="does not record its module's digest"):
        mutation_run.run_module(module, RUN, out, resume=True)
    assert started == [] and (out / "m.sqlite").read_bytes() == b"an older session"


@pytest.mark.parametrize("other", ["--retest", "--report-only"])
def test_resume_goes_with_neither_retest_nor_report_only(other: str, tmp_path: Path) -> None:
    assert mutation_run.main(["--resume", other, "--out", str(tmp_path)]) == 2
