"""Frozen GPU results, exercised on the CPU through the fake-CUDA hook (no GPU was lent to this project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qbank.problems import Level
from qbank.verify import frozen, store
from qbank.verify.engine import VerifyConfig, VerifyUsageError, verify
from qbank.verify.runner import RunOptions

from .conftest import add_script

KERNEL = """# %%
import torch
from qbank.verify import claim, kernel_check

x = torch.linspace(-3, 3, 64).reshape(8, 8)
kernel_check("softmax", lambda t: torch.softmax(t, -1), lambda t: torch.softmax(t.double(), -1).float(), x,
             requires_cuda=True)
claim("elements", x.numel())
"""
FAKE = RunOptions(fake_cuda="Fake H200")


def run(root: Path, device: str, strict: bool = False) -> dict[str, object]:
    opts = FAKE if device == "cuda" else RunOptions()
    result = verify(root, VerifyConfig(slugs=["gpu-softmax"], device=device, strict=strict, options=opts))
    return {"result": result.results[0], "report": result.report}


@pytest.fixture
def gpu_repo(vrepo: Path) -> Path:
    add_script(vrepo, "gpu-softmax", KERNEL)
    return vrepo


def test_needs_gpu_freeze_accept_stale(gpu_repo: Path) -> None:
    """No frozen result: needs-gpu; a (fake) GPU run freezes; the CPU accepts it; an edit makes it stale."""
    out = run(gpu_repo, "cpu")
    result = out["result"]
    assert isinstance(result, dict)
    assert result["outcome"] == "needs-gpu"
    assert [(p["code"], p["line"], p["level"]) for p in result["problems"]] == [("verify-needs-gpu", 6, "warning")]
    strict = run(gpu_repo, "cpu", strict=True)["report"]
    assert strict.failed() and strict.problems[0].level is Level.ERROR  # type: ignore[attr-defined]

    result = run(gpu_repo, "cuda")["result"]
    assert isinstance(result, dict)
    assert result["outcome"] == "pass" and result["frozen_written"] == "verify/_frozen/gpu-softmax.json"
    assert result["kernels"][0]["device"] == "cuda" and result["kernels"][0]["stamp"]["gpu"] == "Fake H200"
    data = json.loads((gpu_repo / frozen.frozen_rel("gpu-softmax")).read_text())
    assert data["stamp"]["gpu"] == "Fake H200" and set(data["stamp"]) == {
        "gpu",
        "capability",
        "driver",
        "torch",
        "cuda",
    }
    assert [k["name"] for k in data["kernels"]] == ["softmax"] and data["kernels"][0]["ok"] is True
    entry = store.read_entry(gpu_repo, "gpu-softmax")
    assert entry is not None and data["input_hash"] == entry["input_hash"]

    # a CPU machine accepts the frozen result because the input hash matches
    result = run(gpu_repo, "cpu")["result"]
    assert isinstance(result, dict)
    assert (result["outcome"], result["reason"], result["problems"]) == ("pass", "device cuda -> cpu", [])
    stamp = result["kernels"][0]
    assert stamp["frozen"] and not stamp["stale"] and stamp["stamp"]["gpu"] == "Fake H200" and stamp["ran_at"]
    latest = store.latest_result(gpu_repo, "gpu-softmax")
    assert latest is not None and latest["kernels"][0]["stamp"]["gpu"] == "Fake H200"
    assert run(gpu_repo, "cpu")["result"]["cache"] == "hit"  # type: ignore[index]

    # the script changes: the frozen result is stale, a warning (an error under --strict)
    path = gpu_repo / "verify" / "gpu-softmax.py"
    path.write_text(path.read_text().replace("64", "32").replace("(8, 8)", "(4, 8)"))
    out = run(gpu_repo, "cpu")
    result = out["result"]
    assert isinstance(result, dict)
    assert (result["outcome"], result["reason"]) == ("needs-gpu", "script changed")
    (problem,) = result["problems"]
    assert (problem["code"], problem["level"], problem["line"]) == ("verify-frozen-stale", "warning", 6)
    assert "stale: needs a GPU re-run" in problem["message"]
    assert not out["report"].failed()  # type: ignore[attr-defined]
    strict = run(gpu_repo, "cpu", strict=True)["report"]
    assert strict.failed()  # type: ignore[attr-defined]


def test_committed_frozen_failure_is_a_fail(gpu_repo: Path) -> None:
    """A frozen file arriving (e.g. from a GPU run in another clone) re-runs the script and its verdict counts."""
    assert run(gpu_repo, "cpu")["result"]["outcome"] == "needs-gpu"  # type: ignore[index]
    entry = store.read_entry(gpu_repo, "gpu-softmax")
    assert entry is not None
    kernels = [{"name": "softmax", "ok": False, "line": 6}]
    stamp = {"gpu": "Other GPU", "capability": "8.0", "driver": "x", "torch": "x", "cuda": "x"}
    path = gpu_repo / frozen.frozen_rel("gpu-softmax")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"input_hash": entry["input_hash"], "stamp": stamp, "kernels": kernels, "ran_at": "t"}))
    result = run(gpu_repo, "cpu")["result"]
    assert isinstance(result, dict)
    assert (result["reason"], result["outcome"]) == ("frozen GPU result changed", "fail")
    assert result["problems"][0]["code"] == "verify-check-failed" and "Other GPU" in result["problems"][0]["message"]


def test_cuda_without_gpu_is_a_usage_error(gpu_repo: Path) -> None:
    with pytest.raises(VerifyUsageError):
        verify(gpu_repo, VerifyConfig(device="cuda"))
