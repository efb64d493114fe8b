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


def test_result_normalised_from_mapping_and_file(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text("# Steps\n\nKV = 2 L H d b{=kv}\n")
    d = from_result(
        tmp_path,
        {
            "derivation_md": "d.md",
            "kernels": [
                {"name": "rmsnorm", "device": "NVIDIA H200", "ran_at": "2026-11-30T03:00:00Z", "ok": True},
                {"name": "topk", "device": "cpu", "when": "2026-11-29", "status": "needs-gpu"},
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
    assert "| rmsnorm | NVIDIA H200 | 2026-11-30T03:00:00Z | pass |" in free
    premium = _derivation(d, True, 2, "questions/x.md", Settings())
    assert "KV = 2 L H d b" not in premium and 'data-qb-section="2"' in premium
    # kernel-check names, devices and times come from the premium script: sealed with it, never outside
    assert "topk" not in premium and "rmsnorm" not in premium and "2026-11-29" not in premium
    sealed = _derivation(d, True, 2, "questions/x.md", Settings(paywall=True))
    assert "| topk | cpu | 2026-11-29 | needs-gpu |" in sealed and "KV = 2 L H d b" in sealed
    assert sealed.lstrip().startswith("<!--qbseal ") and " open premium 2 " in sealed
    sealed = _derivation(d, True, 2, "questions/x.md", Settings(paywall=True))
    assert "### Steps" in sealed and "{=kv}" not in sealed
