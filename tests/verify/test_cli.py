"""`qbank verify` end to end: exit codes, reports, shards and their merge, CUDA scripts one at a time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qbank.cli import main
from qbank.verify import store
from qbank.verify.engine import VerifyConfig, verify
from qbank.verify.shards.plan import make_plan, select
from qbank.verify.runner import RunOptions

from .conftest import add_script

OK = "from qbank.verify import check, claim\nclaim('n', {n})\ncheck({n} > 0, 'positive')\n"
WINDOW = (
    "import time\nfrom qbank.verify import claim\n"
    "start = time.time()\ntime.sleep(1.2)\nclaim('start', start)\nclaim('end', time.time())\n"
)


def test_shards_follow_the_recorded_run_times() -> None:
    slugs = [f"q{i}" for i in range(9)]
    recorded = {s: 1.0 for s in slugs} | {"q4": 8.0}
    parts = [select(slugs, (k, 3), recorded, None) for k in (1, 2, 3)]
    assert sorted(s for p in parts for s in p) == slugs
    assert ["q4"] in parts  # the slow script alone; the eight others split four and four
    plan = make_plan(slugs, recorded, 3)
    assert plan["seconds"] == [8.0, 4.0, 4.0] and plan["recorded"] == 9
    assert [select(slugs, (k, 3), {}, plan) for k in (1, 2, 3)] == parts  # a plan, not this cache, decides


def test_cli_exit_codes_and_reports(
    vrepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    add_script(vrepo, "good", OK.format(n=3))
    add_script(vrepo, "bad", "from qbank.verify import check\ncheck(1 > 2, 'one exceeds two')\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(vrepo)
    report = tmp_path / "r.json"
    assert main(["verify", "--format", "text", "--report-json", str(report)]) == 1
    out, err = capsys.readouterr()
    assert "3 scripts: 3 ran, 0 cached (1 fail, 2 pass)" in out
    assert "verify/bad.py:2:1: error: check failed: one exceeds two [verify-check-failed]" in err
    table = summary.read_text()
    assert "| `bad` | fail |" in table and "ran: no cached result" in table
    data = json.loads(report.read_text())
    assert data["summary"]["fail"] == 1 and set(data["entries"]) == {"good", "bad", "base-question"}

    assert main(["verify", "good", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["results"][0]["cache"] == "hit" and payload["summary"]["ran"] == 0

    assert main(["verify", "nope"]) == 2
    assert main(["verify", "--shard", "3/2"]) == 2
    assert main(["verify", "--device", "cuda"]) == 2


def test_shard_reports_merge_into_one_cache(vrepo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(6):
        add_script(vrepo, f"s{i}", OK.format(n=i + 1))
    reports = []
    plan = tmp_path / "plan.json"  # one plan for every shard: each clone's own records would split differently
    assert main(["verify", "--root", str(vrepo), "--write-plan", str(plan), "--shards", "2"]) == 0
    for k in (1, 2):
        clone = tmp_path / f"clone{k}"
        shutil.copytree(vrepo, clone)
        reports.append(tmp_path / f"shard{k}.json")
        args = ["verify", "--root", str(clone), "--shard", f"{k}/2", "--plan", str(plan), "--report-json", str(reports[-1])]
        assert main(args) == 0
    ran = [json.loads(r.read_text())["summary"]["ran"] for r in reports]
    assert sum(ran) == 7 and all(ran)
    # a shard whose cache was restored still hands over every entry, cached ones included
    again = tmp_path / "again.json"
    args = ["--shard", "1/2", "--plan", str(plan), "--report-json", str(again)]
    assert main(["verify", "--root", str(tmp_path / "clone1"), *args]) == 0
    data = json.loads(again.read_text())
    assert data["summary"]["ran"] == 0 and set(data["entries"]) == {r["slug"] for r in data["results"]}
    assert main(["verify", "--root", str(tmp_path / "clone1"), "--merge", str(reports[0])]) == 1
    assert "no shard report holds this script's result [verify-shard-missing]" in capsys.readouterr().err
    assert main(["verify", "--root", str(tmp_path / "clone2"), "--merge", str(reports[0]), str(reports[0])]) == 1
    assert "[verify-shard-twice]" in capsys.readouterr().err
    assert main(["verify", "--root", str(vrepo), "--merge", *map(str, reports)]) == 0
    assert "7 scripts: 7 ran" in capsys.readouterr().out
    run = verify(vrepo, VerifyConfig())
    assert run.ran == 0 and len(run.results) == 7
    assert store.latest_result(vrepo, "s3") is not None


def test_a_written_plan_drives_the_shards(vrepo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(4):
        add_script(vrepo, f"s{i}", OK.format(n=i + 1))
    (vrepo / "pyproject.toml").write_text("[tool.qbank]\nverify-shards = 3\n")
    plan_file = tmp_path / "plan.json"
    assert main(["verify", "--root", str(vrepo), "--write-plan", str(plan_file)]) == 0
    assert "3 shards, 5 scripts (0 with a recorded run time; " in capsys.readouterr().out
    plan = json.loads(plan_file.read_text())
    assert plan["n"] == 3 and sorted(s for p in plan["shards"] for s in p) == ["base-question", "s0", "s1", "s2", "s3"]
    reports = [tmp_path / f"r{k}.json" for k in (1, 2, 3)]
    for k, report in enumerate(reports, start=1):
        args = ["--shard", f"{k}/3", "--plan", str(plan_file), "--report-json", str(report)]
        assert main(["verify", "--root", str(vrepo), *args]) == 0
        assert [r["slug"] for r in json.loads(report.read_text())["results"]] == plan["shards"][k - 1]
    capsys.readouterr()
    assert main(["verify", "--root", str(vrepo), "--shard", "1/2", "--plan", str(plan_file)]) == 2
    assert "the plan has 3 shards" in capsys.readouterr().err
    add_script(vrepo, "late", OK.format(n=9))  # a plan made before this script: refused, never a silent gap
    assert main(["verify", "--root", str(vrepo), "--shard", "1/3", "--plan", str(plan_file)]) == 2
    assert "not in the plan: late" in capsys.readouterr().err
    assert main(["verify", "--root", str(vrepo), "--plan", str(plan_file)]) == 2
    (vrepo / "pyproject.toml").write_text("[tool.qbank]\nverify-shards = 0\n")
    assert main(["verify", "--root", str(vrepo), "--write-plan", str(plan_file)]) == 2
    assert main(["verify", "--root", str(vrepo), "--write-plan", str(plan_file), "--shards", "2"]) == 0


def test_cuda_scripts_run_one_at_a_time(vrepo: Path) -> None:
    for slug in ("gpu-a", "gpu-b"):
        add_script(vrepo, slug, WINDOW + "# runs a cuda kernel\n")
    for slug in ("cpu-a", "cpu-b"):
        add_script(vrepo, slug, WINDOW)
    verify(vrepo, VerifyConfig(jobs=4, device="cuda", options=RunOptions(fake_cuda="Fake GPU")))

    def window(slug: str) -> tuple[float, float]:
        record = store.latest_record(vrepo, slug)
        assert record is not None
        values = {v["name"]: v["value"] for v in record["values"]}
        return values["start"], values["end"]

    (a0, a1), (b0, b1) = window("gpu-a"), window("gpu-b")
    assert a1 <= b0 or b1 <= a0, "two CUDA scripts overlapped"
    (c0, c1), (d0, d1) = window("cpu-a"), window("cpu-b")
    assert c0 < d1 and d0 < c1, "CPU scripts did not run in parallel"


def _launchers_of(root: Path) -> list[int]:
    """Live script processes started for this repository (found by their QBANK_FACTS)."""
    mark = f"QBANK_FACTS={root}/".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_interrupt_kills_running_scripts(vrepo: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    add_script(vrepo, "sleeper", "import time\nfrom qbank.verify import claim\ntime.sleep(60)\nclaim('x', 1)\n")
    cmd = [sys.executable, "-m", "qbank.cli", "verify", "--root", str(vrepo), "sleeper"]

    def as_from_a_terminal() -> None:
        """^C as a terminal delivers it: the default disposition, not blocked. A child inherits both from this
        test process, where another test's code or the test runner may have left SIGINT ignored or blocked
        (a shell does that to background jobs), and Python then never raises KeyboardInterrupt."""
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=as_from_a_terminal)
    deadline = time.monotonic() + 30
    while not _launchers_of(vrepo) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _launchers_of(vrepo), "the script never started"
    status = Path(f"/proc/{proc.pid}/status").read_text()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        masks = [line for line in status.splitlines() if line.startswith(("SigBlk", "SigIgn", "SigCgt"))]
        raise AssertionError(f"qbank verify outlived SIGINT by 30 s; its signal masks then: {masks}") from None
    assert code == 130
    time.sleep(0.2)
    assert _launchers_of(vrepo) == []
