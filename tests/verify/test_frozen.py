"""Frozen GPU results, exercised on the CPU through the fake-CUDA hook: signed with a key made in the test,
whose public key the test commits into the test repository's verify/_keys/ (the only trusted keys)."""

from __future__ import annotations

import json
import os
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
def signing_key(vrepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runner key: the private key outside the repository (0600), the public key in its verify/_keys/."""
    key = tmp_path / "runner.key"
    frozen.generate_key(key, vrepo)
    monkeypatch.setenv(frozen.SIGNING_ENV, str(key))
    return key


@pytest.fixture
def gpu_repo(vrepo: Path, signing_key: Path) -> Path:
    add_script(vrepo, "gpu-softmax", KERNEL)
    return vrepo


def frozen_file(root: Path) -> Path:
    return root / frozen.frozen_rel("gpu-softmax")


def codes(result: object) -> list[str]:
    assert isinstance(result, dict)
    return [p["code"] for p in result["problems"]]


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
    assert set(frozen.trusted_keys(gpu_repo)) == {data["key_id"]} and data["signature"]
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


def test_committed_frozen_failure_is_a_fail(gpu_repo: Path, signing_key: Path) -> None:
    """A signed frozen file arriving (a GPU run in another clone) re-runs the script and its verdict counts."""
    assert run(gpu_repo, "cpu")["result"]["outcome"] == "needs-gpu"  # type: ignore[index]
    entry = store.read_entry(gpu_repo, "gpu-softmax")
    assert entry is not None
    kernels = [{"name": "softmax", "ok": False, "line": 6}]
    stamp = {"gpu": "Other GPU", "capability": "8.0", "driver": "x", "torch": "x", "cuda": "x"}
    body = {"slug": "gpu-softmax", "input_hash": entry["input_hash"], "stamp": stamp, "kernels": kernels, "ran_at": "t"}
    path = frozen_file(gpu_repo)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(frozen.sign(body, frozen.load_signing_key(str(signing_key)))))
    result = run(gpu_repo, "cpu")["result"]
    assert isinstance(result, dict)
    assert (result["reason"], result["outcome"]) == ("frozen GPU result changed", "fail")
    assert result["problems"][0]["code"] == "verify-check-failed" and "Other GPU" in result["problems"][0]["message"]


def _frozen_then(gpu_repo: Path) -> dict[str, object]:
    run(gpu_repo, "cuda")
    return dict(json.loads(frozen_file(gpu_repo).read_text()))


def test_unsigned_frozen_file_is_an_error(gpu_repo: Path) -> None:
    """The forgery of the issue: the input hash is computable without a GPU; an unsigned file never passes."""
    data = _frozen_then(gpu_repo)
    del data["signature"], data["key_id"]
    frozen_file(gpu_repo).write_text(json.dumps(data))
    result = run(gpu_repo, "cpu")["result"]
    assert result["outcome"] == "error" and codes(result) == ["verify-frozen-unsigned"]  # type: ignore[index]
    (p,) = result["problems"]  # type: ignore[index]
    assert (p["path"], p["line"], p["level"]) == ("verify/_frozen/gpu-softmax.json", 1, "error")


def test_tampered_frozen_file_is_an_error(gpu_repo: Path) -> None:
    """Flipping a failed kernel to ok (or any other field) after signing breaks the signature."""
    data = _frozen_then(gpu_repo)
    data["stamp"] = {**data["stamp"], "gpu": "NVIDIA H100 80GB HBM3"}  # type: ignore[dict-item]
    frozen_file(gpu_repo).write_text(json.dumps(data))
    result = run(gpu_repo, "cpu")["result"]
    assert result["outcome"] == "error" and codes(result) == ["verify-frozen-bad-signature"]  # type: ignore[index]


def test_frozen_file_of_another_slug_is_an_error(gpu_repo: Path) -> None:
    """A validly signed file copied from another question is signed for that slug, not this one."""
    data = _frozen_then(gpu_repo)
    key = frozen.load_signing_key(os.environ[frozen.SIGNING_ENV])
    frozen_file(gpu_repo).write_text(json.dumps(frozen.sign({**data, "slug": "other"}, key)))
    result = run(gpu_repo, "cpu")["result"]
    assert codes(result) == ["verify-frozen-bad-signature"] and "'other'" in result["problems"][0]["message"]  # type: ignore[index]


def test_key_not_committed_is_an_error(gpu_repo: Path, tmp_path: Path) -> None:
    """A file signed by a key whose public half is not in verify/_keys/ (here: written elsewhere) is refused."""
    data = _frozen_then(gpu_repo)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "questions").mkdir(parents=True)
    frozen.generate_key(tmp_path / "rogue.key", elsewhere)
    rogue = frozen.load_signing_key(str(tmp_path / "rogue.key"))
    frozen_file(gpu_repo).write_text(json.dumps(frozen.sign(data, rogue)))
    result = run(gpu_repo, "cpu")["result"]
    assert result["outcome"] == "error" and codes(result) == ["verify-frozen-unknown-key"]  # type: ignore[index]


def test_rotation_removing_the_old_key_refuses_its_files(gpu_repo: Path) -> None:
    data = _frozen_then(gpu_repo)
    (gpu_repo / frozen.KEYS_DIR / f"{data['key_id']}.pub").unlink()
    result = run(gpu_repo, "cpu")["result"]
    assert codes(result) == ["verify-frozen-unknown-key"]


def test_freezing_needs_a_private_key(gpu_repo: Path, signing_key: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, or one readable by others: the GPU run is an error and nothing is written."""
    monkeypatch.delenv(frozen.SIGNING_ENV)
    result = run(gpu_repo, "cuda")["result"]
    assert (result["outcome"], codes(result)) == ("error", ["verify-frozen-no-key"])  # type: ignore[index]
    assert not frozen_file(gpu_repo).exists()
    monkeypatch.setenv(frozen.SIGNING_ENV, str(signing_key))
    signing_key.chmod(0o644)
    result = verify(gpu_repo, VerifyConfig(slugs=["gpu-softmax"], device="cuda", force=True, options=FAKE)).results[0]
    assert codes(result) == ["verify-frozen-no-key"] and "readable by others" in result["message"] + str(result)
    assert not frozen_file(gpu_repo).exists()


def test_keygen_refuses_to_overwrite_and_keeps_the_key_private(vrepo: Path, tmp_path: Path) -> None:
    out = tmp_path / "k.pem"
    kid, pub = frozen.generate_key(out, vrepo)
    assert out.stat().st_mode & 0o777 == 0o600 and pub == vrepo / frozen.KEYS_DIR / f"{kid}.pub"
    assert b"PRIVATE" not in pub.read_bytes() and set(frozen.trusted_keys(vrepo)) == {kid}
    before = out.read_bytes()
    with pytest.raises(FileExistsError):
        frozen.generate_key(out, vrepo)
    assert out.read_bytes() == before


def test_cuda_without_gpu_is_a_usage_error(gpu_repo: Path) -> None:
    with pytest.raises(VerifyUsageError):
        verify(gpu_repo, VerifyConfig(device="cuda"))


def test_gpu_keygen_command(vrepo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The operator's command: where each key went, never the private key itself; a second run refuses."""
    from qbank.cli import main

    out = tmp_path / "gpu.key"
    assert main(["gpu-keygen", "--out", str(out), "--root", str(vrepo)]) == 0
    printed = capsys.readouterr().out
    (pub,) = (vrepo / frozen.KEYS_DIR).glob("*.pub")
    assert str(out) in printed and f"verify/_keys/{pub.name}" in printed
    assert "PRIVATE" not in printed and out.read_text().split("\n")[1] not in printed
    assert main(["gpu-keygen", "--out", str(out), "--root", str(vrepo)]) == 2
