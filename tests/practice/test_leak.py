"""Premium practice text never reaches a built file: the build's leak scan knows premium tests and drills."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from qbank.practice.leak import items_text, practice_leaks, practice_prints
from qbank.practice.load import load_bank

from ..paywall.conftest import qbank
from .conftest import Served


def test_the_built_practice_site_shows_no_premium_practice_text(served_practice: Served) -> None:
    bank, _ = load_bank(served_practice.root)
    assert practice_prints(bank).long, "the premium test and the drill's sealed files are fingerprinted"
    assert practice_leaks(bank, served_practice.site, "site") == []


@pytest.mark.parametrize("what", ["premium test", "edge tests", "reference"])
def test_a_file_showing_sealed_practice_text_is_a_leak(served_practice: Served, tmp_path: Path, what: str) -> None:
    bank, _ = load_bank(served_practice.root)
    site = tmp_path / "site"
    shutil.copytree(served_practice.site, site)
    text = {
        "premium test": items_text(bank.tests["kv-loop-premium"]),
        "edge tests": bank.drill_sources["token-bucket-admission"]["edge_tests.py"],
        "reference": bank.drill_sources["token-bucket-admission"]["reference.py"],
    }[what]
    (site / "assets" / "stray.js.gz").write_bytes(gzip.compress(text.encode()))
    leaks = practice_leaks(bank, site, "site")
    assert {(p.path, p.code) for p in leaks} == {("site/assets/stray.js.gz", "premium-leak")}


@pytest.mark.slow
def test_build_refuses_a_free_test_that_pastes_a_premium_item(practice_repo: Path) -> None:
    premium = (practice_repo / "practice" / "kv-loop-premium.yaml").read_text()
    free_path = practice_repo / "practice" / "kv-free-sample.yaml"
    premium_sentence = "Two tensors times 80 layers times 8 heads times 128 times 2 bytes."
    pasted = "One gibibyte over the bytes of one token. " + premium_sentence
    assert premium_sentence in premium
    free_path.write_text(free_path.read_text().replace("One gibibyte over the bytes of one token.", pasted))
    for name in ("mkdocs.yml", "hooks", "site_src", "paywall"):
        src = Path(__file__).resolve().parents[2] / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, practice_repo / name)
    (practice_repo / ".vendor").symlink_to(Path(__file__).resolve().parents[2] / ".vendor")
    run = qbank("build", "--root", str(practice_repo), "--no-links")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "premium-leak" in run.stdout + run.stderr
    assert "premium practice test" in run.stdout + run.stderr
    assert not (practice_repo / "site").exists()
