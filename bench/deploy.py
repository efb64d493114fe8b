"""Benchmark: objects and bytes a deploy uploads, by what changed, at N questions (counts, not timings).

    python bench/deploy.py            # N = 1,000 questions

A synthetic corpus (``bench/build.py``'s generator; two thirds premium) is built with the real hooks, the
deploy job's keyslot step seals it under the epoch from a real ledger (60 sold licenses), and
``qbank.deploy`` uploads it to moto's S3 server over HTTP. Then, each time rebuilt from scratch:

- ``unchanged``: the same content again (a rebuild is a new build key);
- ``edit``: one premium answer's premium section edited;
- ``new_reader``: a license sold (no re-key);
- ``revocation``: a license revoked (a new epoch).

The baseline, measured in the same run, is the first deploy (the whole site). ``before_epochs_edit``
counts what the previous scheme uploaded for the same edit (every build a new release: every page naming
the release, every ciphertext file and every keyslot file), from this run's site.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import git, print_figures, write_corpus
from qbank.build import mkdocs_build
from qbank.deploy import S3Store, execute, make_client, parse_target, plan_deploy, scan_site
from qbank.paywall.keyslots import run_keyslots
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_identity_text

READERS = 60
TODAY = dt.date.today()


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (the machine is shared: read the figures next to them)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def release(root: Path, site: Path, ledger: Path, key: Path, pub: Path) -> dict[str, Any]:
    """Build (the real hooks, sealed to ``pub``) and run the keyslot step; what it said."""
    os.environ["QBANK_RELEASE_RECIPIENT"] = str(pub)
    mkdocs_build(root, site)
    info = json.loads((site / "qbank-build.json").read_text())
    sealed = root / ".qbank/release" / f"{info['release']}.sealed.json"
    slots = run_keyslots(site, sealed, load_identity_text(key.read_text("ascii"), "identity"), str(ledger), TODAY,
                         epoch=str(root / ".qbank/epoch.json"))
    return {"epoch": slots.release_id, "rekeyed": slots.rekeyed, "sections": slots.sections}


def deploy(store: S3Store, site: Path) -> dict[str, Any]:
    """Plan and upload; the counts."""
    plan = plan_deploy(store, scan_site(site), datetime.now(UTC), timedelta(days=7))
    result = execute(plan, store, site, jobs=8)
    kinds: dict[str, int] = {}
    for a in plan.uploads:
        kind = a.path.split("/")[1] if a.path.startswith("assets/") else a.path.split("/")[0]
        kinds[kind if kind in {"keyslots", "premium", "pagefind", "questions"} else "other"] = kinds.get(
            kind if kind in {"keyslots", "premium", "pagefind", "questions"} else "other", 0) + 1
    return {"objects": result.uploaded, "bytes": result.uploaded_bytes, "by_kind": dict(sorted(kinds.items())),
            "unchanged": result.unchanged, "kept_in_grace": result.retained}


def before_epochs(site: Path, epoch: str) -> dict[str, int]:
    """What one edit cost before epochs: every page naming the release, every ciphertext and slot file."""
    paths = [p for p in site.rglob("*") if p.is_file()]
    names = [p for p in paths if p.suffix == ".html" and epoch in p.read_text("utf-8")]
    names += [p for p in paths if "assets/premium/" in p.as_posix() or "assets/keyslots/" in p.as_posix()]
    names.append(site / "qbank-build.json")
    return {"objects": len(names), "bytes": sum(p.stat().st_size for p in names)}


def complete_corpus(root: Path) -> None:
    """What the generator does not (yet) write and the model now requires: each question's short title and
    meta description; and the real catalog's concept explanations link real questions, absent from a
    synthetic corpus, so only the link text is kept (the build is strict: a dead link stops it)."""
    for path in sorted((root / "questions").glob("synthetic-question-*.yaml")):
        doc = yaml.safe_load(path.read_text())
        i = int(path.stem.rsplit("-", 1)[1])
        doc["short_title"] = f"Synthetic question {i}"
        doc["description"] = (f"Synthetic question {i} of the deploy benchmark: how a quantity of LLM inference "
                              "scales, derived step by step.")
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    concepts = root / "questions/_catalog/concepts.yaml"
    concepts.write_text(re.sub(r"\[([^\]]+)\]\(\.\./questions/[^)]+\)", r"\1", concepts.read_text()))
    git(root, "commit", "-qam", "synthetic corpus: short titles, descriptions; concept pages link no real question")


def run(n: int, tmp: Path) -> dict[str, Any]:
    """Generate, build, deploy, change one thing at a time, deploy again; count."""
    from moto.server import ThreadedMotoServer

    root, site = tmp / "repo", tmp / "site"
    write_corpus(root, n)
    complete_corpus(root)
    key, pub, _ = keygen(tmp / "deploy-env" / "identity.key")
    ledger = tmp / "private" / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        sold = book.mint(READERS + 1)
        for i, k in enumerate(sold[:READERS]):
            book.sell(k, TODAY - dt.timedelta(days=i), f"r{i}@example.com")
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ[var] = "bench"
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        client = make_client(f"http://{host}:{port}", "us-east-1")
        client.create_bucket(Bucket="bench-site")
        store = S3Store(client, parse_target("s3://bench-site/www"))
        out: dict[str, Any] = {"questions": n, "premium_questions": sum(1 for i in range(n) if i % 3 != 0),
                               "readers": READERS, "load_average_start": load_average()}
        steps: dict[str, Any] = {}
        said = release(root, site, ledger, key, pub)
        steps["first"] = {**deploy(store, site), **said}
        steps["unchanged"] = {**(release(root, site, ledger, key, pub)), **deploy(store, site)}
        answer = root / "answers" / "synthetic-question-00001.md"
        text = answer.read_text()
        head, premium = text.split("/// premium", 1)
        answer.write_text(head + "/// premium" + re.sub(r"\.", ". Edited.", premium, count=1))
        steps["edit"] = {**release(root, site, ledger, key, pub), **deploy(store, site)}
        out["before_epochs_edit"] = before_epochs(site, steps["edit"]["epoch"])
        with open_ledger(ledger) as book:
            book.sell(sold[READERS], TODAY, "new@example.com")
        steps["new_reader"] = {**release(root, site, ledger, key, pub), **deploy(store, site)}
        with open_ledger(ledger) as book:
            book.revoke(sold[0], "refund")
        steps["revocation"] = {**release(root, site, ledger, key, pub), **deploy(store, site)}
        out["steps"] = steps
        base = steps["first"]
        out["ratios_to_first_deploy"] = {
            k: {"objects": round(v["objects"] / base["objects"], 4), "bytes": round(v["bytes"] / base["bytes"], 4)}
            for k, v in steps.items() if k != "first"
        }
        out["edit_vs_before_epochs"] = {
            "objects": round(steps["edit"]["objects"] / out["before_epochs_edit"]["objects"], 4),
            "bytes": round(steps["edit"]["bytes"] / out["before_epochs_edit"]["bytes"], 4),
        }
        out["load_average_end"] = load_average()
        return out
    finally:
        server.stop()


def main() -> int:
    """Parse arguments, run, print the figures as JSON."""
    import argparse

    parser = argparse.ArgumentParser(description="objects and bytes a deploy uploads, by what changed")
    parser.add_argument("--n", type=int, default=1000, help="number of questions (default 1000)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    return print_figures("qbank-deploy-bench-", args.keep, lambda tmp: run(args.n, tmp))


if __name__ == "__main__":
    sys.exit(main())
