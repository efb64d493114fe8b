"""The workflows rehearsed, not just linted: pull-request.yml, main.yml, refresh.yml and gpu-refresh.yml run
job by job, step by step (tests/workflows/runner.py), in fresh clones of a test repository, against moto's S3
server over HTTP, then the deployed bucket opened in Chromium.

The test repository: the paywall corpus through this repository's real site (make_site_repo) plus copies of
its .github/, Makefile, pyproject.toml and .gitignore, and a fresh release identity whose PUBLIC key is
committed as paywall/release-recipient.pub (the production one is never used). No src/: the venv the steps
see (setup-python's mapping) runs this worktree's code through $PYTHONPATH.

Run with ``-s`` to read the rehearsal logs.
"""

from __future__ import annotations

import base64
import datetime as dt
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from cryptography.hazmat.primitives import serialization

from qbank.paywall.keyslots import load_sealed
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import identity_from_env, keygen, unseal
from qbank.paywall.shop import sendowl

from ..conftest import CASES, REPO, make_site_repo
from ..deploy.conftest import _aws_env, bucket, s3, s3_endpoint  # noqa: F401  (fixtures)
from ..paywall.conftest import qbank
from ..paywall.test_release_flow import KV_PATH, SUMMARY, forms, mirror_bucket, origin, unlock_in_chromium  # noqa: F401
from .runner import Run, _context, condition, load, run_workflow

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("rehearsal")]

SHARDS = 3
SUBSTITUTED = frozenset({"Lint and type-check", "Tests"})  # this project's own suite: it would recurse
HEADER = "Order ID,Date,Buyer Email,License Key,State\r\n"


def rehearsal_repo(dest: Path, identity_dir: Path) -> tuple[Path, str]:
    """The test repository, committed; returns it and the base64 release identity (the deploy secret)."""
    root = make_site_repo(dest, CASES / "paywall")
    for name in (".github",):
        shutil.copytree(REPO / name, root / name)
    for name in ("Makefile", "pyproject.toml", ".gitignore"):
        shutil.copy2(REPO / name, root / name)
    config = root / "pyproject.toml"  # three shard jobs for the corpus's three scripts
    text, n = re.subn(r"^verify-shards = \d+$", f"verify-shards = {SHARDS}", config.read_text(), flags=re.M)
    assert n == 1, "pyproject.toml lost [tool.qbank] verify-shards"
    config.write_text(text)
    key, pub, _ = keygen(identity_dir / "release-identity.key")
    shutil.copy2(pub, root / "paywall" / "release-recipient.pub")  # replaces the production recipient
    shutil.copy2(CASES / "paywall" / "claims.lock", root / "claims.lock")  # the case's committed binding lock
    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    raw = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,  # type: ignore[union-attr]
                                serialization.NoEncryption())
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "workflows and recipient"], check=True)
    return root, base64.b64encode(raw).decode()


def base_env(tmp: Path) -> dict[str, str]:
    """What a fresh runner's process starts with: nothing of ours but PATH and the code under test."""
    return {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "PYTHONPATH": str(REPO / "src"), "LANG": "C.UTF-8", "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "TMPDIR": str(tmp)}


class _Purges(http.server.BaseHTTPRequestHandler):
    """A stand-in for Cloudflare's purge endpoint (vars.CLOUDFLARE_API_URL): records what it is asked."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Purges.seen.append({"path": self.path, "files": body["files"]})
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"success": true}')

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def cdn() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Purges)
    _Purges.seen = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def rehearse(name: str, run: Run) -> bool:
    run.say(f"######## rehearsal: {name} ({run.event}, {run.ref})")
    return run_workflow(run.repo / ".github" / "workflows" / name, run)


def test_pull_request_is_green_with_no_secrets(tmp_path: Path) -> None:
    repo, _ = rehearsal_repo(tmp_path / "repo", tmp_path / "deploy-env")
    run = Run(repo, tmp_path / "run", "pull_request", "refs/pull/7/merge", {}, {}, base_env(tmp_path),
              SUBSTITUTED)
    assert rehearse("pull-request.yml", run), "\n".join(run.log[-60:])
    assert run.results["checks / checks"] == "success"
    text = "\n".join(run.log)
    assert "unlocked /questions/" in text and "premium sections: " in text  # the throwaway unlock check ran
    assert text.count("substituted: `true`") == 2
    assert not (tmp_path / "run" / "artifacts" / "site").exists()  # no deploy artifact from a pull request
    assert_sharded_like_unsharded(repo, tmp_path, run)
    assert run.step_envs and all(not k.startswith("AWS_ACCESS") and k != "QBANK_RELEASE_IDENTITY"
                                 for _, env in run.step_envs for k in env)


def outcomes(report: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """What a verification report says of each script: outcome, claims, checks and problem codes."""
    return {r["slug"]: (r["outcome"], r["claims"], r["checks"], sorted(p["code"] for p in r["problems"]))
            for r in report["results"]}


def assert_sharded_like_unsharded(repo: Path, tmp_path: Path, run: Run) -> None:
    """The three shard jobs ran one script each, and the merge job's report equals one unsharded run's."""
    artifacts = tmp_path / "run" / "artifacts"
    names = [f"verify-shard-{k}" for k in range(1, SHARDS + 1)]
    assert sorted(p.name for p in artifacts.glob("verify-shard-*")) == names
    parts = [[r["slug"] for r in json.loads((artifacts / n / f"{n}.json").read_text())["results"]] for n in names]
    scripts = sorted(p.stem for p in (repo / "verify").glob("*.py"))
    assert len(scripts) == SHARDS and sorted(s for part in parts for s in part) == scripts
    assert all(len(part) == 1 for part in parts), parts
    (merged_file,) = (tmp_path / "run").glob("*merge-check*/ws/verify-merged.json")
    merged = json.loads(merged_file.read_text())
    clone = tmp_path / "unsharded"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    alone = qbank("verify", "--root", str(clone), "--format", "json")
    assert alone.returncode in (0, 1), alone.stderr
    unsharded = json.loads(alone.stdout)
    assert unsharded["summary"]["ran"] == SHARDS
    assert outcomes(merged) == outcomes(unsharded) and len(outcomes(merged)) == SHARDS
    log = "\n".join(run.log)
    check = log[log.index("merge, check, build, links / qbank check\n"):]
    assert "(no cached result)" not in check[:check.index("\nexit ")]  # the merged cache left nothing to run


def test_main_then_refund_then_refresh_end_to_end(
    tmp_path: Path, s3: Any, bucket: str, s3_endpoint: str, origin: tuple[str, Path], cdn: str  # noqa: F811
) -> None:
    url, mirror = origin
    repo, identity = rehearsal_repo(tmp_path / "repo", tmp_path / "deploy-env")
    private = bucket + "-private"
    s3.create_bucket(Bucket=private)
    s3.put_bucket_versioning(Bucket=private, VersioningConfiguration={"Status": "Enabled"})
    ledger = f"s3://{private}/ledger.sqlite3"
    aws = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    operator = {"QBANK_LEDGER": ledger, "QBANK_LEDGER_ENDPOINT_URL": s3_endpoint}

    # the operator: a pool for the shop, then the shop's order export selling two keys
    pool = tmp_path / "operator" / "sendowl-keys.txt"
    pool.parent.mkdir()
    out = qbank("license", "export", "--shop", "sendowl", "--count", "3", "--out", str(pool), env=operator)
    assert out.returncode == 0, out.stderr
    sold = sendowl.read_key_list(pool)[:2]
    today = dt.date.today().isoformat()
    rows = [f"5001,{today},ann@example.org,{sold[0]},complete\r\n",
            f"5002,{today},bob@example.org,{sold[1]},complete\r\n"]
    orders = tmp_path / "operator" / "orders.csv"
    orders.write_text(HEADER + "".join(rows))
    imported = qbank("license", "import", str(orders), "--shop", "sendowl", env=operator)
    assert imported.returncode == 0 and "2 sales" in imported.stdout, imported.stdout + imported.stderr

    secrets = {"QBANK_RELEASE_IDENTITY": identity, "QBANK_LEDGER": ledger,
               "DEPLOY_ACCESS_KEY_ID": aws["AWS_ACCESS_KEY_ID"],
               "DEPLOY_SECRET_ACCESS_KEY": aws["AWS_SECRET_ACCESS_KEY"],
               "CLOUDFLARE_API_TOKEN": "cf-rehearsal-token", "CLOUDFLARE_ZONE_ID": "zone42"}
    variables = {"SITE_URL": url + "/", "DEPLOY_TARGET": f"s3://{bucket}/www",
                 "DEPLOY_PRIVATE": f"s3://{private}/qbank", "DEPLOY_ENDPOINT_URL": s3_endpoint,
                 "DEPLOY_REGION": "us-east-1", "CLOUDFLARE_API_URL": cdn}
    main = Run(repo, tmp_path / "main", "push", "refs/heads/main", secrets, variables, base_env(tmp_path),
               SUBSTITUTED)
    assert rehearse("main.yml", main), "\n".join(main.log[-80:])
    assert main.results == {"checks / plan": "success", "checks / verify": "success", "checks / tests": "success",
                            "checks / checks": "success", "checks": "success", "deploy": "success"}
    checks_envs = [env for step, env in main.step_envs if step.startswith("checks /")]
    for env in checks_envs:  # the checks (and their build) never see a secret or a ledger
        assert not set(secrets.values()) & set(env.values()) and "QBANK_LEDGER" not in env
    artifact = tmp_path / "main" / "artifacts" / "site"
    assert not (artifact / "site" / "assets" / "keyslots").exists()  # slots come from the deploy job only
    # the card store: missed on this first run, every card drawn by the checked build, none by the deploy's
    # build in the same job, and saved for the next run with exactly this site's cards
    log = "\n".join(main.log)
    cards = len(list((artifact / "site" / "assets" / "cards").glob("*.png")))
    assert cards > 10 and "cache miss for qbank-cards-" in log
    assert log.count(f"social cards: {cards} drawn, 0 from the card store") == 1
    assert log.count(f"social cards: 0 drawn, {cards} from the card store") == 1
    (store,) = (tmp_path / "main" / "cache").glob("qbank-cards-*")
    assert len(list(store.glob("*.card"))) == cards
    (sealed_file,) = (artifact / "release").glob("*.sealed.json")
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="www/assets/keyslots/")["Contents"]]
    assert listed, "no keyslots in the bucket"
    first = SUMMARY.search(main.summaries["deploy / Deploy to object storage"])
    assert first and int(first.group(1)) > 0 and _Purges.seen and _Purges.seen[0]["path"] == "/zones/zone42/purge_cache"

    def refresh(tag: str) -> tuple[Run, str]:
        r = Run(repo, tmp_path / tag, "schedule", "refs/heads/main", secrets, variables, base_env(tmp_path))
        assert rehearse("refresh.yml", r), "\n".join(r.log[-40:])
        found = SUMMARY.search(r.summaries["refresh / qbank paywall refresh"])
        assert found
        return r, found.group(0)

    unchanged_run, unchanged = refresh("refresh-unchanged")
    assert SUMMARY.search(unchanged).groups() == ("0", "0"), unchanged  # type: ignore[union-attr]

    # Chromium: both sold keys open the premium page
    mirror_bucket(s3, bucket, "www/", mirror)
    unlock_in_chromium(url, [(sold[0], None), (sold[1], None)])

    # the shop's next export marks one sale refunded; the daily refresh revokes it
    orders.write_text(HEADER + rows[0].replace("complete", "refunded") + rows[1])
    refund = qbank("license", "import", str(orders), "--shop", "sendowl", env=operator)
    assert refund.returncode == 0 and "1 revocations" in refund.stdout, refund.stdout + refund.stderr
    revoked_run, revoked = refresh("refresh-revoked")
    n, size = SUMMARY.search(revoked).groups()  # type: ignore[union-attr]
    assert n == "1" and int(size) > 0, revoked
    objects = mirror_bucket(s3, bucket, "www/", mirror)
    unlock_in_chromium(url, [(sold[0], "revoked"), (sold[1], None)])

    print("\n---- deploy summaries")
    print("first (main deploy):", first.group(0))
    print("unchanged (refresh):", unchanged)
    print("revocation (refresh):", revoked)

    # nothing written, uploaded or logged holds a KEK, the release key, the identity or a buyer's email
    release_key = unseal(load_sealed(sealed_file), identity_from_env({"QBANK_RELEASE_IDENTITY": identity}))
    local = tmp_path / "ledger-copy.sqlite3"
    s3.download_file(private, "ledger.sqlite3", str(local))
    with open_ledger(local) as book:
        keks = [bytes(k) for (k,) in book.conn.execute("SELECT kek FROM licenses")]
    needles = [f for s in [release_key, *keks] for f in forms(s)]
    needles += [identity.encode(), b"ann@example.org", b"bob@example.org"]
    hay = list(objects.values())
    hay += [p.read_bytes() for p in (tmp_path / "main" / "artifacts").rglob("*") if p.is_file()]
    hay += ["\n".join(r.log).encode() for r in (main, unchanged_run, revoked_run)]
    hay += ["\n".join(r.summaries.values()).encode() for r in (main, unchanged_run, revoked_run)]
    assert len(keks) == 3 and len(hay) > 30
    hits = [(i, n) for i, h in enumerate(hay) for n in needles if n in h]
    assert hits == []


def test_gpu_refresh_is_skipped_off_main(tmp_path: Path) -> None:
    repo, _ = rehearsal_repo(tmp_path / "repo", tmp_path / "deploy-env")
    for ref, expected in (("refs/heads/feature", "skipped"),):
        run = Run(repo, tmp_path / "gpu", "workflow_dispatch", ref, {"GPU_REFRESH_TOKEN": "tok"}, {},
                  base_env(tmp_path))
        assert rehearse("gpu-refresh.yml", run)
        assert run.results == {"refresh": expected} and run.step_envs == []
    # the same condition, evaluated by the same runner, holds on main
    job = load(repo / ".github/workflows/gpu-refresh.yml")["jobs"]["refresh"]
    on_main = Run(repo, tmp_path / "gpu-main", "workflow_dispatch", "refs/heads/main", {}, {}, base_env(tmp_path))
    assert condition(job["if"], _context(on_main, {}, {}, {}, tmp_path, {}, success=True))


@pytest.fixture(autouse=True)
def _moto_credentials(_aws_env: None) -> None:  # noqa: F811
    """Dummy AWS credentials for moto in this process (the operator's qbank calls); never in a step's env."""
    assert os.environ["AWS_ACCESS_KEY_ID"] == "testing"
