"""`qbank serve --built`: the built site with the CDN headers and a real 404; linkchecker over it."""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from qbank.deploy.headers import IMMUTABLE, SHORT, parse_headers

from .conftest import SyntheticSite, serving


def fetch(base: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One GET without following redirects: status, headers (last value of each name), body."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=30)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_serves_the_built_site_with_host_headers_and_a_real_404(built_repo: Path) -> None:
    site = built_repo / "site"
    csp = dict(parse_headers((site / "_headers").read_text())[0].headers)["Content-Security-Policy"]
    css = next((site / "assets" / "stylesheets").glob("main.*.min.css")).relative_to(site).as_posix()
    with serving(site) as base:
        status, headers, body = fetch(base, "/")
        assert status == 200 and b"</html>" in body
        assert headers["content-type"] == "text/html; charset=utf-8" and headers["cache-control"] == SHORT
        assert headers["content-security-policy"] == csp and "'sha256-" in csp
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"

        status, headers, _ = fetch(base, "/" + css)
        assert (status, headers["cache-control"]) == (200, IMMUTABLE)
        assert headers["content-type"] == "text/css; charset=utf-8"

        status, headers, body = fetch(base, "/no/such/page/")
        assert status == 404 and body == (site / "404.html").read_bytes()
        assert headers["content-security-policy"] == csp

        status, headers, _ = fetch(base, "/about")
        assert (status, headers["location"]) == (301, "/about/")
        assert fetch(base, "/_headers")[0] == 404 and fetch(base, "/../../etc/passwd")[0] == 404

        status, headers, body = fetch(base, "/sitemap.xml.gz")
        assert (status, headers["content-type"], headers.get("content-encoding")) == (200, "application/gzip", None)


def linkchecker(url: str) -> subprocess.CompletedProcess[str]:
    """Run linkchecker over a local origin (internal links only; it is a dependency of qbank)."""
    exe = shutil.which("linkchecker", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if exe is None:
        pytest.fail("linkchecker is not installed (it is a qbank dependency: pip install -e '.[dev]')")
    return subprocess.run(
        [exe, "--no-status", "--no-warnings", "--threads", "4", url],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
    )


def test_linkchecker_finds_no_broken_link_in_the_built_site(built_repo: Path) -> None:
    with serving(built_repo / "site") as base:
        proc = linkchecker(base)
    print(proc.stdout[-600:])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 errors found" in proc.stdout


def test_linkchecker_over_the_local_origin_does_report_a_broken_link(tmp_path: Path) -> None:
    """The control: the same check fails when a page links to a path that does not exist."""
    spec = SyntheticSite()
    spec.pages["index.html"] = 'Home <a href="/questions/missing/">gone</a>'
    with serving(spec.write(tmp_path / "site")) as base:
        proc = linkchecker(base)
    assert proc.returncode == 1 and "/questions/missing/" in proc.stdout and "404" in proc.stdout
