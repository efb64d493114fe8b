"""A real mkdocs build with the page worker against one without it, over the same repository: the same site,
page for page, once what each build draws at random (its release key, so its ciphertext) is named alike; and a
page the worker refuses fails the build with the page named, as it does without the worker."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from ..paywall.conftest import make_repo

RANDOM = [
    (re.compile(r'(<meta name="qbank-release" content=")[0-9a-f]+(")'), r"\1RELEASE\2"),
    (re.compile(r'(data-qb-file=")[^"]+(")'), r"\1FILE\2"),
]


ONE_BUILD = """
import json, logging, sys
from pathlib import Path
from qbank.pagepool import pool
pool.MIN_PAGES = 1 if sys.argv[3] == "worker" else 10**9
started = []
class Counted(pool.PagePool):
    def __init__(self, *args, **kwargs):
        started.append(1)
        super().__init__(*args, **kwargs)
pool.PagePool = Counted  # the hooks are loaded by the build and import it then
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from qbank.build import mkdocs_build
try:
    mkdocs_build(Path(sys.argv[1]), Path(sys.argv[2]))
    ok = True
except Exception:
    ok = False
print(json.dumps({"started": len(started), "ok": ok}))
"""


def build(root: Path, out: Path, *, worker: bool) -> tuple[int, bool, str]:
    """Build ``root`` into ``out`` in a process of its own, as ``qbank build`` runs (one thread, so the worker
    may fork), with the page worker or without; returns how many workers started, whether the build succeeded
    and what it logged."""
    done = subprocess.run([sys.executable, "-c", ONE_BUILD, str(root), str(out), "worker" if worker else "-"],
                          capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return int(result["started"]), bool(result["ok"]), done.stderr


def pages(site: Path) -> dict[str, str]:
    found = {}
    for path in sorted(site.rglob("*.html")):
        text = path.read_text("utf-8")
        for pattern, name in RANDOM:
            text = pattern.sub(name, text)
        found[path.relative_to(site).as_posix()] = text
    return found


def test_the_worker_builds_the_same_site(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    assert build(root, tmp_path / "with", worker=True)[:2] == (1, True)
    assert build(root, tmp_path / "without", worker=False)[:2] == (0, True)
    with_worker, without = pages(tmp_path / "with"), pages(tmp_path / "without")
    assert with_worker.keys() == without.keys() and len(with_worker) > 10
    for name in with_worker:
        assert with_worker[name] == without[name], name
    sealed = [name for name, text in with_worker.items() if 'data-qb-file="FILE"' in text]
    assert sealed  # the comparison covered pages with premium sections
    files = {p.relative_to(tmp_path / "with").as_posix() for p in (tmp_path / "with").rglob("*") if p.is_file()}
    others = {p.relative_to(tmp_path / "without").as_posix() for p in (tmp_path / "without").rglob("*") if p.is_file()}
    assert len(files) == len(others)  # as many ciphertext files, under names of their own


def test_pages_the_worker_refuses_fail_the_build_each_named(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    for name in ("alpha", "beta"):
        (root / "site_src" / f"{name}.md").write_text(f"# {name}\n\n<script>alert(1)</script>\n")
    for worker in (True, False):
        started, ok, log = build(root, tmp_path / f"site-{worker}", worker=worker)
        assert (started, ok) == (int(worker), False)
        assert "alpha.md: page content may not contain <script> (CSP forbids it)" in log
        if worker:  # every refused page at once, not only the first
            assert "beta.md: page content may not contain <script> (CSP forbids it)" in log
