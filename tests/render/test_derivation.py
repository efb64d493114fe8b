"""The verification-store adapter: absent store -> nothing; a result -> derivation and kernel stamps."""

from __future__ import annotations

from pathlib import Path

from qbank.render.derivation import from_result, latest
from qbank.render.question import _derivation
from qbank.render.settings import Settings


def test_absent_store_gives_nothing(tmp_path: Path) -> None:
    """A repository with no verification store (no .qbank at all) has no derivation for any question."""
    assert not (tmp_path / ".qbank").exists()
    assert latest(tmp_path, "kv-per-request") is None


def test_result_in_the_verification_store_shape(tmp_path: Path) -> None:
    """The shape ``qbank.verify.store.latest_result`` returns on the verify branch."""
    deriv = tmp_path / ".qbank" / "derivations" / "x.md"
    deriv.parent.mkdir(parents=True)
    deriv.write_text("Step one.\n")
    d = from_result(
        tmp_path,
        {
            "slug": "x",
            "outcome": "pass",
            "device": "auto",
            "ran_at": "2026-11-30T03:00:00+00:00",
            "derivation": str(deriv),
            "kernels": [
                {"name": "topk", "ok": True, "device": "cuda", "ran_at": "2026-11-29T10:00:00+00:00",
                 "stamp": {"gpu": "NVIDIA H200", "torch": "2.13.0"}, "frozen": True},
                {"name": "norm", "ok": False, "device": "cpu", "stamp": {"device": "cpu", "torch": "2.13.0"}},
            ],
        },
    )
    assert d.markdown == "Step one.\n"
    assert [(k.name, k.device, k.ran_at, k.outcome) for k in d.kernels] == [
        ("topk", "NVIDIA H200", "2026-11-29T10:00:00+00:00", "pass (frozen result)"),
        ("norm", "cpu", "2026-11-30T03:00:00+00:00", "fail"),
    ]


def test_result_rendered_free_premium_and_sealed(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text("# Steps\n\nKV = 2 L H d b{=kv}\n")
    d = from_result(
        tmp_path,
        {
            "derivation": "d.md",
            "ran_at": "2026-11-29",
            "kernels": [
                {"name": "rmsnorm", "device": "cuda", "stamp": {"gpu": "NVIDIA H200"}, "ran_at": "2026-11-30T03:00:00Z",
                 "ok": True},
                {"name": "topk", "device": "cpu", "ok": False, "needs_gpu": True},
            ],
        },
    )
    assert d.markdown is not None and d.markdown.startswith("# Steps")
    assert [(k.name, k.device, k.outcome) for k in d.kernels] == [
        ("rmsnorm", "NVIDIA H200", "pass"),
        ("topk", "cpu", "needs-gpu"),
    ]
    free = _derivation(d, False, 1, "questions/x.md", Settings())
    assert "## Executed derivation" in free and "### Steps" in free and "{=kv}" not in free
    assert "| rmsnorm | NVIDIA H200 | pass | 2026-11-30T03:00:00Z |" in free  # no speed column: nothing timed
    premium = _derivation(d, True, 2, "questions/x.md", Settings())
    assert "KV = 2 L H d b" not in premium and 'data-qb-section="2"' in premium
    # kernel-check names, devices and times come from the premium script: sealed with it, never outside
    assert "topk" not in premium and "rmsnorm" not in premium and "2026-11-29" not in premium
    sealed = _derivation(d, True, 2, "questions/x.md", Settings(paywall=True))
    assert "| topk | cpu | needs-gpu | 2026-11-29 |" in sealed and "KV = 2 L H d b" in sealed
    assert sealed.lstrip().startswith("<!--qbseal ") and " open premium 2 " in sealed
    sealed = _derivation(d, True, 2, "questions/x.md", Settings(paywall=True))
    assert "### Steps" in sealed and "{=kv}" not in sealed


def test_triton_paths_are_never_blurred(tmp_path: Path) -> None:
    """The build's interpreter check and a signed compiled run are separate rows; speed only on the compiled."""
    timing = {"ms": 0.05, "bytes_per_s": 3.0e12, "peak_fraction": 0.625, "peak_bytes_per_s": 4.8e12, "ref_ms": 0.4}
    gpu = {"device_name": "NVIDIA H200", "ok": True, "ran_at": "2026-12-01T10:00:00Z", "timing": timing}
    d = from_result(
        tmp_path,
        {
            "ran_at": "2026-12-02T06:00:00Z",
            "kernels": [
                {"name": "spec", "ok": True, "device": "cpu", "path": "triton-interpreter", "device_name": "CPU",
                 "gpu": gpu},
                {"name": "bug", "ok": True, "device": "cpu", "path": "triton-interpreter", "expect_mismatch": True,
                 "timing": timing},
            ],
        },
    )
    free = _derivation(d, False, 1, "questions/x.md", Settings())
    assert "| spec | Triton interpreter (CPU) | pass |  | 2026-12-02T06:00:00Z |" in free
    assert (
        "| spec | compiled, NVIDIA H200 | pass (frozen result, signed) | 0.05 ms · 3 TB/s, 62% of the 4.8 TB/s "
        "datasheet peak · PyTorch reference 0.4 ms (8.0× the kernel's time) | 2026-12-01T10:00:00Z |"
    ) in free
    # a timing on an interpreter row (never written by the engine) is not shown as a speed
    assert "| bug | Triton interpreter (CPU) | pass (broken on purpose: differs from the reference) |  |" in free
