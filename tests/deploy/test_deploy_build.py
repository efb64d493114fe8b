"""`qbank deploy` end to end: a real `qbank build` of the tiny corpus, through the command line, to S3."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from qbank.deploy.headers import IMMUTABLE, SHORT

from .conftest import make_repo, qbank


def test_real_build_deploys_then_redeploys_only_what_a_page_edit_changed(
    tmp_path: Path, s3: Any, bucket: str, built_repo: Path
) -> None:
    root = make_repo(tmp_path / "repo")
    shutil.copytree(built_repo / "site", root / "site")
    target = ["--target", f"s3://{bucket}/www", "--endpoint-url", s3.meta.endpoint_url, "--format", "text"]
    env = dict(os.environ)

    dry = qbank("deploy", *target, "--dry-run", cwd=root, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "dry run: nothing was changed" in dry.stdout and "Contents" not in s3.list_objects_v2(Bucket=bucket)
    as_json = json.loads(qbank("deploy", *target[:-2], "--format", "json", "--dry-run", cwd=root, env=env).stdout)
    assert [a[0] for a in as_json["actions"]][-1] == "manifest" and "/about/" in as_json["invalidate"]

    first = qbank("deploy", *target, cwd=root, env=env)
    print(first.stdout)
    assert first.returncode == 0, first.stderr
    n = len([p for p in (root / "site").rglob("*") if p.is_file() and p.name not in ("_headers", "_redirects")])
    assert f"deploy: {n} uploaded" in first.stdout and ", 0 unchanged" in first.stdout
    css = next((root / "site" / "assets" / "stylesheets").glob("main.*.min.css")).relative_to(root / "site")
    head = s3.head_object(Bucket=bucket, Key=f"www/{css.as_posix()}")
    assert (head["CacheControl"], head["ContentType"]) == (IMMUTABLE, "text/css; charset=utf-8")
    assert s3.head_object(Bucket=bucket, Key="www/about/index.html")["CacheControl"] == SHORT

    second = qbank("deploy", *target, cwd=root, env=env)
    print(second.stdout)
    assert f"deploy: 0 uploaded (0 B), {n} unchanged" in second.stdout

    about = root / "site_src" / "about.md"
    about.write_text(about.read_text() + "\nEdited for the deploy test: zanzibar.\n")
    build = qbank("build", "--format", "text", cwd=root)
    assert build.returncode == 0, build.stderr
    plan = qbank("deploy", *target, "--dry-run", cwd=root, env=env)
    print(plan.stdout)
    uploads = re.findall(r"^upload +\S+ +(\S+)", plan.stdout, re.M)
    assert "about/index.html" in uploads and "pagefind/pagefind-entry.json" in uploads
    release = [p for p in uploads if p.startswith(("assets/premium/", "assets/keyslots/"))]
    # each build is a new paywall release: a new content key, so new ciphertext; its keyslots are written by
    # the deploy job (`qbank paywall keyslots`), never by the build
    assert len(release) == 1 and release[0].startswith("assets/premium/")
    for path in uploads:  # nothing whose bytes did not change because of the edit or the new release
        text = (root / "site" / path).read_bytes()
        if path.startswith("pagefind/") and text[:2] == b"\x1f\x8b":
            text = gzip.decompress(text)  # Pagefind's index chunks
        assert (
            b"zanzibar" in text
            or path.startswith("sitemap")
            or path in release
            or b"data-qb-file=" in text  # a premium page names the release's ciphertext file
            or b"data-qb-unlock-count" in text  # a hub's count opens with the release, so the page names it
            or path == "qbank-build.json"  # the build's public record: site URL and release id
            # Pagefind's metadata and its page-type filter (results labelled question/topic/...) renumber pages
            or path in ("pagefind/pagefind-entry.json", *(p for p in uploads if p.endswith((".pf_meta", ".pf_filter"))))
        ), path
    pages = [p for p in uploads if p.endswith(".html") and p != "about/index.html"]
    # the premium page, and the hubs whose unlock counts open with the release (they name it)
    assert "questions/base-question/index.html" in pages
    assert all(b'<meta name="qbank-release"' in (root / "site" / p).read_bytes() for p in pages), pages
    third = qbank("deploy", *target, cwd=root, env=env)
    assert third.returncode == 0 and f"deploy: {len(uploads)} uploaded" in third.stdout
    assert "/about/" in third.stdout  # listed for CDN invalidation


def test_deploy_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    proc = qbank("deploy", "--target", "s3://bkt/x", cwd=tmp_path)
    assert proc.returncode == 2 and "no built site" in proc.stderr
    (tmp_path / "site" / "index.html").write_text("<p>x</p>")
    proc = qbank("deploy", "--target", "https://example.invalid/x", cwd=tmp_path)
    assert proc.returncode == 2 and "s3://bucket/prefix" in proc.stderr


def test_deploy_to_a_missing_bucket_fails_cleanly(tmp_path: Path, s3: Any) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>x</p>")
    proc = qbank(
        "deploy",
        "--target",
        "s3://qbank-no-such-bucket/x",
        "--endpoint-url",
        s3.meta.endpoint_url,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert proc.returncode == 3 and "NoSuchBucket" in proc.stderr and "Traceback" not in proc.stderr
