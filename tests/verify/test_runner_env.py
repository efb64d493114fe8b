"""The environment a verification script sees, as a pure function of the parent's: every variable passed on is
named here (not read from the runner's lists), every value written out, and nothing else of the parent's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import qbank
from qbank.verify.runner import RunOptions, child_env

PASSED = {"PATH": "/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "LC_CTYPE": "C.UTF-8", "TZ": "UTC"}
CUDA = {"CUDA_VISIBLE_DEVICES": "0", "LD_LIBRARY_PATH": "/nonexistent/cuda", "NVIDIA_VISIBLE_DEVICES": "all"}
SECRETS = {"GITHUB_TOKEN": "ghp_x", "AWS_SECRET_ACCESS_KEY": "k", "QBANK_LICENSE_KEY": "QB-X", "PYTHONSTARTUP": "/x"}


@pytest.fixture
def parent(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in list(os.environ):
        monkeypatch.delenv(k)
    for k, v in {**PASSED, **CUDA, **SECRETS, "HOME": "/home/someone"}.items():
        monkeypatch.setenv(k, v)


def fixed(root: Path, run: Path, work: Path, threads: str = "1", device: str = "cpu") -> dict[str, str]:
    src = str(Path(qbank.__file__).resolve().parent.parent)
    return {
        "HOME": str(work),
        "TMPDIR": str(work / "tmp"),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": f"{src}:{root}/verify/_lib",
        "QBANK_VERIFY_OUT": str(run / "record.json"),
        "QBANK_FACTS": f"{root}/verify/_lib/facts.yaml",
        "QBANK_DEVICE": device,
        "OMP_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "TRITON_CACHE_DIR": str(work / ".triton"),
    }


def test_a_cpu_run_sees_the_allowlist_and_its_own_settings_only(parent: None, tmp_path: Path) -> None:
    r, run, work = tmp_path, tmp_path / "run", tmp_path / "work"
    env = child_env(r, run, work, RunOptions(threads=3))
    assert env == {**PASSED, **fixed(r, run, work, "3"), "TRITON_INTERPRET": "1"}


def test_a_gpu_run_also_sees_the_cuda_variables(parent: None, tmp_path: Path) -> None:
    r, run, work = tmp_path, tmp_path / "run", tmp_path / "work"
    env = child_env(r, run, work, RunOptions(device="cuda"))
    # no libcuda under the LD_LIBRARY_PATH given: no TRITON_LIBCUDA_PATH either
    assert env == {**PASSED, **CUDA, **fixed(r, run, work, device="cuda")}


def test_a_fake_gpu_run_is_a_cpu_run_and_sees_no_cuda_variable(parent: None, tmp_path: Path) -> None:
    r, run, work = tmp_path, tmp_path / "run", tmp_path / "work"
    env = child_env(r, run, work, RunOptions(device="cuda", fake_cuda="Fake H100"))
    want = {**PASSED, **fixed(r, run, work, device="cuda"), "TRITON_INTERPRET": "1", "QBANK_FAKE_CUDA": "Fake H100"}
    assert env == want


def test_extra_variables_come_last_and_win(parent: None, tmp_path: Path) -> None:
    env = child_env(
        tmp_path, tmp_path / "r", tmp_path / "w", RunOptions(extra_env=(("TZ", "Europe/Paris"), ("X", "1")))
    )
    assert (env["TZ"], env["X"]) == ("Europe/Paris", "1")


def test_an_allowed_variable_the_parent_lacks_is_absent(
    parent: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TZ")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert "TZ" not in child_env(tmp_path, tmp_path / "r", tmp_path / "w", RunOptions())
    assert "CUDA_VISIBLE_DEVICES" not in child_env(tmp_path, tmp_path / "r", tmp_path / "w", RunOptions(device="cuda"))
