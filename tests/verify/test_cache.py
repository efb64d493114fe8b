"""The cache: a second run executes nothing; every input change re-runs with its reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qbank.verify import cache, engine, store
from qbank.verify.engine import VerifyConfig, verify
from qbank.verify.options import RunOptions

from .conftest import VERIFY_CASES, add_script

LIB_SCRIPT = """# %%
import kvmath
from qbank.verify import claim

claim("per_token", kvmath.per_token(80, 8, 128, 2), unit="B")
"""
LIB = "def per_token(layers, kv_heads, head_dim, nbytes):\n    return 2 * layers * kv_heads * head_dim * nbytes\n"


def reasons(root: Path, **kw: object) -> dict[str, str | None]:
    run = verify(root, VerifyConfig(jobs=2, **kw))  # type: ignore[arg-type]
    return {r["slug"]: r["reason"] for r in run.results}


def age(root: Path) -> None:
    """Make every file look older than the racy-hash window, as if edited minutes ago."""
    old = os.stat(root).st_mtime - 600
    for path in root.rglob("*"):
        if ".qbank" not in path.parts:
            os.utime(path, (old, old))


@pytest.fixture
def cached(vrepo: Path) -> Path:
    (vrepo / "verify" / "_lib" / "kvmath.py").write_text(LIB)
    add_script(vrepo, "uses-lib", LIB_SCRIPT)
    add_script(vrepo, "kv-cache-llama-70b", (VERIFY_CASES / "kv-cache-llama-70b.py").read_text())
    age(vrepo)
    first = reasons(vrepo)
    assert set(first.values()) == {"no cached result"}
    return vrepo


def test_second_run_executes_nothing(cached: Path) -> None:
    run = verify(cached, VerifyConfig())
    assert run.ran == 0 and [r["cache"] for r in run.results] == ["hit"] * 3
    assert {r["outcome"] for r in run.results} == {"pass"}


def test_warm_run_reads_no_file_when_stats_hold(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verify(cached, VerifyConfig())  # settles hashes taken within the racy window
    calls: list[Path] = []
    real = cache.sha_file
    monkeypatch.setattr(cache, "sha_file", lambda p: calls.append(p) or real(p))
    assert verify(cached, VerifyConfig()).ran == 0
    assert calls == []


def test_script_change(cached: Path) -> None:
    path = cached / "verify" / "uses-lib.py"
    path.write_text(path.read_text() + "\n# a comment\n")
    assert reasons(cached)["uses-lib"] == "script changed"


def test_touch_without_change_is_a_hit(cached: Path) -> None:
    os.utime(cached / "verify" / "uses-lib.py")
    assert reasons(cached)["uses-lib"] is None


def test_imported_local_module_change(cached: Path) -> None:
    lib = cached / "verify" / "_lib" / "kvmath.py"
    lib.write_text(LIB + "\nVERSION = 2\n")
    got = reasons(cached)
    assert got["uses-lib"] == "verify/_lib/kvmath.py changed"
    assert got["kv-cache-llama-70b"] is None and got["base-question"] is None


def test_facts_change(cached: Path) -> None:
    facts = cached / "verify" / "_lib" / "facts.yaml"
    facts.write_text(facts.read_text() + "\n# edited\n")
    got = reasons(cached)
    assert got["kv-cache-llama-70b"] == "verify/_lib/facts.yaml changed"
    assert got["uses-lib"] is None


def test_same_size_same_mtime_edit_is_caught_by_racy_check(cached: Path) -> None:
    """An edit that keeps size and mtime is still seen when the hash was taken within the racy window."""
    store.write_index(cached, store.Index())  # hashes taken now: the files are older, so stats are trusted
    verify(cached, VerifyConfig())
    path = cached / "verify" / "uses-lib.py"
    st = path.stat()
    path.write_text(path.read_text().replace("80", "81"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    # trusted stats miss this edit (as git would); --force is the remedy, and the key is a content hash
    assert reasons(cached, force=True)["uses-lib"] == "forced (--force)"
    entry = store.read_entry(cached, "uses-lib")
    assert entry is not None and entry["record"]["values"][0]["value"] == 2 * 81 * 8 * 128 * 2


def test_torch_upgrade(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = cache.runtime_version()
    monkeypatch.setattr(cache, "torch_version", lambda: "2.14.1")
    assert set(reasons(cached).values()) == {f"torch {old} -> 2.14.1 triton {cache.triton_version()}"}


def test_triton_upgrade(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = cache.runtime_version()
    monkeypatch.setattr(cache, "triton_version", lambda: "3.10.0")
    assert set(reasons(cached).values()) == {f"torch {old} -> {cache.torch_version()} triton 3.10.0"}


def test_api_version_change(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = engine.API_VERSION
    monkeypatch.setattr(engine, "API_VERSION", now + 1)
    assert set(reasons(cached).values()) == {f"API {now} -> {now + 1}"}


def test_lost_index_falls_back_to_entries(cached: Path) -> None:
    before = store.read_index(cached)
    (cached / store.INDEX).unlink()
    assert verify(cached, VerifyConfig()).ran == 0
    after = store.read_index(cached)  # rebuilt from the entries, row for row
    assert set(after.rows) == set(before.rows) and after.envs == before.envs
    assert all(after.row(s) == before.row(s) for s in before.rows)


def test_the_index_is_compact_and_drops_unused_environments(tmp_path: Path) -> None:
    index = store.Index()
    stats = {"verify/a.py": [1, 2, "sha", 3], "verify/_lib/x.py": [1, 2, "sha2", 3]}
    index.put("a", {"env": [3, "old", "cpu", "sandbox"], "stats": stats, "result": {"outcome": "pass"}, "frozen": None})
    index.put("a", {"env": [3, "new", "cpu", "sandbox"], "stats": stats, "result": {"outcome": "pass"}, "frozen": None})
    store.write_index(tmp_path, index)
    back = store.read_index(tmp_path)
    assert back.envs == [[3, "new", "cpu", "sandbox"]] and back.rows["a"][0] == 0
    assert back.row("a") == {"env": [3, "new", "cpu", "sandbox"], "deps": ["verify/_lib/x.py"], "frozen": None,
                             "stats": stats, "result": {"outcome": "pass"}}


def test_deleted_script_leaves_the_index(cached: Path) -> None:
    (cached / "verify" / "uses-lib.py").unlink()
    verify(cached, VerifyConfig())
    assert "uses-lib" not in store.read_index(cached).rows
    assert store.latest_record(cached, "uses-lib") is None
    assert not store.derivation_path(cached, "uses-lib").exists()


def test_timeout_change_reruns_a_timed_out_script(vrepo: Path) -> None:
    add_script(
        vrepo, "slow", "import time\nfrom qbank.verify import claim\ntime.sleep(1.5)\nclaim('x', 1)\n", timeout=1
    )
    assert verify(vrepo, VerifyConfig(slugs=["slow"])).results[0]["outcome"] == "timeout"
    assert verify(vrepo, VerifyConfig(slugs=["slow"])).ran == 0
    add_script(vrepo, "slow", (vrepo / "verify" / "slow.py").read_text(), timeout=5)
    result = verify(vrepo, VerifyConfig(slugs=["slow"])).results[0]
    assert (result["reason"], result["outcome"]) == ("timeout 1 s -> 5 s", "pass")


def test_touched_file_is_hashed_once_then_trusted(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verify(cached, VerifyConfig())
    path = cached / "verify" / "uses-lib.py"
    old = path.stat().st_mtime - 300
    os.utime(path, (old, old))  # touched (to an older time, outside the racy window), content unchanged
    calls: list[Path] = []
    real = cache.sha_file
    monkeypatch.setattr(cache, "sha_file", lambda p: calls.append(p) or real(p))
    assert verify(cached, VerifyConfig()).ran == 0
    assert [p.name for p in calls] == ["uses-lib.py"]
    calls.clear()
    assert verify(cached, VerifyConfig()).ran == 0
    assert calls == []


def trusted(**kw: object) -> VerifyConfig:
    """A ``--trust-local`` run: no bubblewrap wall."""
    return VerifyConfig(jobs=2, options=RunOptions(trust_local=True), **kw)  # type: ignore[arg-type]


def test_a_result_made_without_the_sandbox_never_serves_a_sandboxed_run(vrepo: Path) -> None:
    add_script(vrepo, "kv-cache-llama-70b", (VERIFY_CASES / "kv-cache-llama-70b.py").read_text())
    age(vrepo)
    assert verify(vrepo, trusted()).ran == 2
    verify(vrepo, trusted())  # settles hashes taken within the racy window
    assert verify(vrepo, trusted()).ran == 0  # --trust-local results serve --trust-local runs
    entry = store.read_entry(vrepo, "base-question")
    assert entry is not None and entry["inputs"]["wall"] == "trust-local"
    assert entry["index"]["env"][3] == "trust-local"
    assert set(reasons(vrepo).values()) == {"sandbox trust-local -> sandbox"}
    after = store.read_entry(vrepo, "base-question")
    assert after is not None and after["inputs"]["wall"] == "sandbox" and after["key"] != entry["key"]


def test_without_the_index_a_trust_local_entry_still_reruns_sandboxed(vrepo: Path) -> None:
    age(vrepo)
    assert verify(vrepo, trusted()).ran == 1
    (vrepo / store.INDEX).unlink()  # the entries' rows are read: the same rule holds there
    assert reasons(vrepo) == {"base-question": "sandbox trust-local -> sandbox"}


def test_a_sandboxed_result_serves_a_trust_local_run(cached: Path) -> None:
    verify(cached, VerifyConfig())
    assert verify(cached, trusted()).ran == 0
    assert verify(cached, VerifyConfig()).ran == 0  # and the trust-local run did not downgrade the rows


def test_a_row_without_a_recorded_wall_reruns(cached: Path) -> None:
    """Rows written before the wall was part of the key say nothing about it: they run again, sandboxed."""
    index = store.read_index(cached)
    index.envs = [env[:3] for env in index.envs]
    store.write_index(cached, index)
    for slug in index.rows:
        entry = store.read_entry(cached, slug)
        assert entry is not None
        entry["index"]["env"] = entry["index"]["env"][:3]
        store.write_entry(cached, entry)
    assert set(reasons(cached).values()) == {"sandbox unrecorded -> sandbox"}


MALFORMED_ROWS = {
    "not a list": "row",
    "three items": [0, {}, {"outcome": "pass"}],
    "environment out of range": [7, {}, {"outcome": "pass"}, None],
    "environment not a number": ["0", {}, {"outcome": "pass"}, None],
    "stats not a mapping": [0, [], {"outcome": "pass"}, None],
    "a stat of three items": [0, {"verify/uses-lib.py": [1, 2, "sha"]}, {"outcome": "pass"}, None],
    "a stat's size a string": [0, {"verify/uses-lib.py": ["1", 2, "sha", 3]}, {"outcome": "pass"}, None],
    "result a string": [0, {}, "pass", None],
    "result without an outcome": [0, {}, {"duration": 1}, None],
    "frozen path a number": [0, {}, {"outcome": "pass"}, 5],
}


@pytest.mark.parametrize("kind", sorted(MALFORMED_ROWS))
def test_a_malformed_index_row_is_dropped_and_its_script_reruns(cached: Path, kind: str) -> None:
    """The index is a file like any other input: a bad row is no cached result, never an internal error."""
    path = cached / store.INDEX
    data = store.read_json(path)
    data["rows"]["uses-lib"] = MALFORMED_ROWS[kind]
    store.write_json(path, data)
    assert "uses-lib" not in store.read_index(cached).rows
    run = verify(cached, VerifyConfig())
    assert {r["slug"]: r["cache"] for r in run.results if r["cache"] != "hit"} == {}  # the entry still serves it
    (cached / store.INDEX).unlink()
    store.write_json(path, data)
    entry = store.entry_path(cached, "uses-lib")
    broken = store.read_json(entry)
    broken["index"]["stats"] = {"verify/uses-lib.py": "x"}
    store.write_json(entry, broken)
    data["rows"]["uses-lib"] = MALFORMED_ROWS[kind]
    store.write_json(path, data)
    run = verify(cached, VerifyConfig())  # neither the index nor the entry holds a usable row: it runs again
    assert {r["slug"]: r["reason"] for r in run.results if r["cache"] != "hit"} == {"uses-lib": "no cached result"}
    assert {r["outcome"] for r in run.results} == {"pass"}


@pytest.mark.parametrize("entry_text", ["", "[]", '{"result": "pass"}', '{"result": {"duration": 1}}'])
def test_a_malformed_entry_is_no_result(cached: Path, entry_text: str) -> None:
    (cached / store.INDEX).unlink()
    store.entry_path(cached, "uses-lib").write_text(entry_text)
    assert store.latest_result(cached, "uses-lib") is None and store.latest_record(cached, "uses-lib") is None
    run = verify(cached, VerifyConfig())
    assert {r["slug"]: r["reason"] for r in run.results if r["cache"] != "hit"} == {"uses-lib": "no cached result"}


def test_a_reason_names_a_few_changed_files_and_counts_the_rest() -> None:
    old = {"script": "s", "deps": {f"lib/m{i}.py": "a" for i in range(9)}}
    new = {"script": "s", "deps": {**{f"lib/m{i}.py": "b" for i in range(8)}, "lib/m8.py": cache.ABSENT}}
    got = cache.reasons(old, new, "verify/x.py")
    assert got == [*(f"lib/m{i}.py changed" for i in range(cache.MAX_FILES_NAMED - 1)),
                   f"{9 - cache.MAX_FILES_NAMED + 1} more files"]
    few = {"script": "s", "deps": {"lib/m0.py": "b", "lib/m1.py": cache.ABSENT}}
    assert cache.reasons({"script": "s", "deps": {"lib/m0.py": "a", "lib/m1.py": "a"}}, few, "verify/x.py") == [
        "lib/m0.py changed", "lib/m1.py removed"]
