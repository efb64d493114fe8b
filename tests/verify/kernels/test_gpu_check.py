"""``qbank gpu-check``: refuses without a GPU or a signing key (before spending GPU time); on the fake GPU it
runs every kernel script, freezes and signs, and prints one line per kernel that says which path ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qbank.cli import main
from qbank.verify import frozen
from qbank.verify.kernels.summary import Row, text

from ..conftest import add_script
from .test_frozen_figures import SCRIPT


def test_refused_without_a_gpu_or_a_key(vrepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.delenv("QBANK_FAKE_CUDA", raising=False)
    monkeypatch.setattr("qbank.verify.engine.Path.exists", lambda self: False)  # no NVIDIA driver here either
    assert main(["gpu-check", "--root", str(vrepo)]) == 2
    assert "no GPU here" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setenv("QBANK_FAKE_CUDA", "Fake H200")
    monkeypatch.delenv(frozen.SIGNING_ENV, raising=False)
    assert main(["gpu-check", "--root", str(vrepo)]) == 2
    assert "no signing key" in capsys.readouterr().err


def test_fake_gpu_run_freezes_signs_and_summarises(vrepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    key = tmp_path / "runner.key"
    frozen.generate_key(key, vrepo)
    monkeypatch.setenv(frozen.SIGNING_ENV, str(key))
    monkeypatch.setenv("QBANK_FAKE_CUDA", "Fake H200")
    add_script(vrepo, "triton-double", SCRIPT)
    assert main(["gpu-check", "--root", str(vrepo), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "triton-double:double" in out and "triton-interpreter" in out and "pass" in out
    assert "frozen and signed: verify/_frozen/triton-double.json" in out
    data = json.loads((vrepo / frozen.frozen_rel("triton-double")).read_text())
    assert frozen.check_signature(vrepo, "triton-double", data) is None


def test_summary_line_of_a_timed_kernel() -> None:
    row = Row("spec", "k", "triton-compiled", "NVIDIA H200", True, 0.25, 3840.0, 0.8, 1.0)
    out = text([row])
    assert out.splitlines()[0] == "GPU check on NVIDIA H200"
    assert "spec:k  triton-compiled  pass    0.2500  3840  80.0    1.0000      4.0x faster" in out
