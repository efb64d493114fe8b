"""The rehearsal's runner itself: its expressions, its runner files, and that its walls can fail a run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .runner import Run, evaluate, read_pairs, run_workflow

CTX = {"secrets": {}, "vars": {"SITE_URL": "https://x/"}, "inputs": {"upload-site": False},
       "github": {"ref": "refs/heads/main"}, "steps": {"c": {"outputs": {"cache-hit": "true"}}},
       "__call__": lambda name, args: {"success": True, "cancelled": False, "always": True}[name]}


@pytest.mark.parametrize(("expr", "value"), [
    ("github.ref == 'refs/heads/main'", True),
    ("github.ref == 'refs/heads/feature'", False),
    ("vars.SITE_URL || 'default'", "https://x/"),
    ("vars.MISSING || 'default'", "default"),
    ("inputs.upload-site && steps.c.outputs.cache-hit != 'true'", False),
    ("!cancelled() && success()", True),
    ("!(inputs.upload-site)", True),
    ("secrets.NONE", None),
])
def test_expressions(expr: str, value: object) -> None:
    assert evaluate(expr, CTX) == value


def test_runner_files(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_text("a=1\nb<<EOF\nline 1\nline=2\nEOF\nc=x=y\n")
    assert read_pairs(f) == {"a": "1", "b": "line 1\nline=2", "c": "x=y"}


def _repo(tmp_path: Path, workflow: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".github/workflows").mkdir(parents=True)
    (repo / ".github/workflows/w.yml").write_text(workflow)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "w"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    return repo


def _run(tmp_path: Path, repo: Path) -> Run:
    return Run(repo, tmp_path / "run", "push", "refs/heads/main", {}, {}, {"PATH": "/usr/bin:/bin"})


def test_a_checkout_that_keeps_credentials_fails(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@v4\n")
    run = _run(tmp_path, repo)
    assert not run_workflow(repo / ".github/workflows/w.yml", run)
    assert "checkout: credentials persisted in .git/config" in run.log


def test_outputs_env_and_failures_flow_between_steps(tmp_path: Path) -> None:
    repo = _repo(tmp_path, """on: push
env:
  W: wf
jobs:
  a:
    runs-on: x
    steps:
      - id: s
        run: |
          echo "v=42" >> "$GITHUB_OUTPUT"
          echo "E=from-env-file" >> "$GITHUB_ENV"
      - run: test "${{ steps.s.outputs.v }}" = 42 && test "$E" = from-env-file && test "$W" = wf && test "$CI" = true
      - run: false | true
      - run: exit 0
      - name: after a failure
        run: echo never
      - name: always
        if: always()
        run: echo cleanup
  b:
    needs: a
    runs-on: x
    steps:
      - run: echo never
""")
    run = _run(tmp_path, repo)
    assert not run_workflow(repo / ".github/workflows/w.yml", run)
    text = "\n".join(run.log)
    assert "== a / false | true\nexit 1" in text  # -o pipefail
    assert run.log.count("exit 0") == 3 and "never" not in text.replace("echo never", "")
    assert "== a / exit 0: skipped" in text and "== a / after a failure: skipped" in text and "cleanup" in text
    assert run.results == {"a": "failure", "b": "skipped"}


def test_a_matrix_from_an_earlier_jobs_output_and_its_artifacts(tmp_path: Path) -> None:
    repo = _repo(tmp_path, """on: push
jobs:
  plan:
    runs-on: x
    outputs:
      shards: ${{ steps.p.outputs.shards }}
    steps:
      - id: p
        run: echo 'shards=[1,2,3]' >> "$GITHUB_OUTPUT"
  shard:
    name: shard ${{ matrix.shard }}
    needs: plan
    runs-on: x
    strategy:
      matrix:
        shard: ${{ fromJSON(needs.plan.outputs.shards) }}
    steps:
      - run: test ! -e part-*.txt && echo "${{ matrix.shard }}" > "part-${{ matrix.shard }}.txt"
      - uses: actions/upload-artifact@v4
        with:
          name: part-${{ matrix.shard }}
          path: part-${{ matrix.shard }}.txt
  merge:
    needs: [plan, shard]
    runs-on: x
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: part-*
          path: parts
          merge-multiple: true
      - run: test "$(cat parts/*.txt | tr -d '\\n')" = 123
""")
    run = _run(tmp_path, repo)
    assert run_workflow(repo / ".github/workflows/w.yml", run), "\n".join(run.log)
    assert [line for line in run.log if line.startswith("== shard") and "/" not in line] == [
        "== shard 1", "== shard 1: success", "== shard 2", "== shard 2: success", "== shard 3", "== shard 3: success"]
    assert run.results == {"plan": "success", "shard": "success", "merge": "success"}


def test_two_expressions_in_one_string() -> None:
    from .runner import interpolate

    ctx = CTX | {"matrix": {"shard": 2}, "needs": {"plan": {"outputs": {"n": "3"}}}}
    assert interpolate("${{ matrix.shard }}/${{ needs.plan.outputs.n }}", ctx) == "2/3"
    assert interpolate("${{ matrix.shard }}", ctx) == 2
