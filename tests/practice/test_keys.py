"""Answer keys are verified values: resolved from the verification records, never typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qbank.claims.values import values_for
from qbank.corpus import load_corpus
from qbank.pipeline import check_all
from qbank.practice.check import check_practice
from qbank.practice.load import Bank, cross_check, load_bank
from qbank.practice.model import NumericItem
from qbank.render.practice import practice_test_data
from qbank.units import to_base
from qbank.verify import engine
from qbank.verify.store import entry_path, read_entry, write_json

from ..conftest import REPO


def _bank(root: Path) -> Bank:
    corpus, _ = load_corpus(root)
    bank, problems = load_bank(root)
    assert not problems
    assert not cross_check(root, corpus, bank)
    return bank


def _assert_keys_are_records(root: Path, bank: Bank) -> int:
    n = 0
    for slug, test in bank.tests.items():
        data = practice_test_data(bank, slug)
        for i, item in enumerate(test.items):
            if not isinstance(item, NumericItem):
                continue
            question, claim = item.answer.split(":")
            declared = {d.name: d for d in values_for(root, question) or []}[claim]
            want = to_base(declared.value, declared.unit)[0] / to_base(1.0, item.unit or None)[0]
            assert data["items"][i]["key"] == pytest.approx(want, rel=1e-12), (slug, i)
            n += 1
    return n


def test_every_key_of_the_practice_corpus_is_its_scripts_value(practice_repo: Path) -> None:
    assert _assert_keys_are_records(practice_repo, _bank(practice_repo)) == 8


def test_a_changed_script_value_changes_the_key_the_page_gets(practice_repo: Path) -> None:
    script = practice_repo / "verify" / "kv-bytes-per-token.py"
    script.write_text(script.read_text().replace('given("layers", 32,', 'given("layers", 64,')
                      .replace("check(per_token == 131072", "check(per_token == 262144"))
    _corpus, report = check_all(practice_repo)
    assert report.errors == 0, [p.text() for p in report.problems]
    data = practice_test_data(_bank(practice_repo), "kv-free-sample")
    assert data["items"][0]["key"] == 256.0  # KiB: twice the layers, twice the bytes


def test_a_key_without_a_passing_record_is_refused(practice_repo: Path) -> None:
    entry = read_entry(practice_repo, "kv-bytes-per-token")
    assert entry is not None
    entry["result"]["outcome"] = "fail"
    write_json(entry_path(practice_repo, "kv-bytes-per-token"), entry)
    corpus, _ = load_corpus(practice_repo)
    _bank, problems = check_practice(practice_repo, corpus, run=False)
    codes = {(p.path, p.code) for p in problems}
    assert codes == {("practice/kv-free-sample.yaml", "practice-key-unverified")}
    assert len(problems) == 5  # four numeric keys and one evidence value of that script
    entry_path(practice_repo, "kv-bytes-per-token").unlink()
    _bank, problems = check_practice(practice_repo, corpus, run=False)
    assert all("no verification record" in p.message for p in problems) and len(problems) == 5


def test_keys_used_by_practice_are_not_unused_claims(practice_repo: Path) -> None:
    _corpus, report = check_all(practice_repo)
    assert not [p for p in report.problems if p.code == "claim-unused"]
    (practice_repo / "practice" / "kv-free-sample.yaml").unlink()
    (practice_repo / "practice" / "kv-loop-premium.yaml").unlink()
    _corpus, report = check_all(practice_repo)
    assert {p.message.split("'")[1] for p in report.problems if p.code == "claim-unused"} >= {
        "kv_bytes_per_token", "tokens_per_gib", "kv_bytes_8k", "mha_factor"}


@pytest.mark.slow
def test_every_key_of_the_repository_bank_is_a_verified_value() -> None:
    """The real bank: the scripts its keys name are verified (cached in .qbank/), then every key resolves."""
    bank, problems = load_bank(REPO)
    assert not problems
    slugs = sorted({ref.split(":")[0] for t in bank.tests.values() for item in t.items
                    for ref in ([item.answer] if isinstance(item, NumericItem) else item.evidence)})
    run = engine.verify(REPO, engine.VerifyConfig(slugs=slugs))
    assert run.report.errors == 0, json.dumps([p.text() for p in run.report.problems])
    assert _assert_keys_are_records(REPO, _bank(REPO)) >= 8 * len(bank.tests) // 2
