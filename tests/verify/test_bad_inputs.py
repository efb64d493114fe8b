"""Every bad script gets its own outcome and positioned problem, the run goes on, and nothing hangs."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qbank.verify import store
from qbank.verify.engine import VerifyConfig, VerifyRun, verify
from qbank.verify.runner import RunOptions

from ..capabilities import require
from ..conftest import CASE_IGNORE, CASES, REPO
from .conftest import add_script

# one worker runs the module, so the shared run of all bad scripts (a module fixture) happens once
pytestmark = pytest.mark.xdist_group("verify-bad-inputs")

BAD = CASES / "verify" / "bad"
EXPECT_RE = re.compile(r"# expect: (.*)")
SECRET = "AKIA-test-secret-never-visible"


def expectation(path: Path) -> dict[str, Any]:
    """Parse ``# expect: outcome=... code=... line=here|N timeout=T``; ``here`` is the line marked ``# <- here``."""
    text = path.read_text()
    m = EXPECT_RE.search(text)
    assert m, f"{path.name} declares no expectation"
    fields = dict(kv.split("=", 1) for kv in m.group(1).split())
    if fields.get("line") == "here":
        fields["line"] = str(next(i for i, line in enumerate(text.splitlines(), 1) if "# <- here" in line))
    return fields


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    """A TCP server on 127.0.0.1 that a script must not reach."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    srv.setblocking(False)
    yield srv
    srv.close()


def place(root: Path, case: Path, port: int) -> None:
    text = case.read_text().replace("PORT = 9 ", f"PORT = {port} ")
    timeout = expectation(case).get("timeout")
    add_script(root, case.stem, text, int(timeout) if timeout else None)


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory: pytest.TempPathFactory, listener: socket.socket) -> Iterator[tuple[Path, VerifyRun]]:
    """All bad scripts in one run (two at a time), with a secret in the parent's environment."""
    root = tmp_path_factory.mktemp("bad") / "repo"
    shutil.copytree(CASES / "base", root, ignore=CASE_IGNORE)
    (root / "verify" / "_lib").mkdir()
    shutil.copy(REPO / "verify" / "_lib" / "facts.yaml", root / "verify" / "_lib")
    for case in sorted(BAD.glob("*.py")):
        place(root, case, listener.getsockname()[1])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
        # the static check would refuse most of these before they start: this module tests the walls beneath it
        opts = RunOptions(mem_bytes=2 << 30, static_check=False)
        yield root, verify(root, VerifyConfig(jobs=2, options=opts))


@pytest.mark.parametrize("case", sorted(BAD.glob("*.py")), ids=lambda p: p.stem)
def test_bad_script_outcome(case: Path, bad_run: tuple[Path, VerifyRun]) -> None:
    _root, run = bad_run
    want = expectation(case)
    result = next(r for r in run.results if r["slug"] == case.stem)
    assert result["outcome"] == want["outcome"], result
    codes = {(p["code"], p["line"]) for p in result["problems"]}
    if "code" in want:
        assert (want["code"], int(want["line"])) in codes, result["problems"]
        assert all(p["path"] == f"verify/{case.stem}.py" for p in result["problems"])
    else:
        assert not result["problems"], result["problems"]


# the issue's list of bad inputs, one script each (env-secret-read is a second look at the secret case)
ISSUE_CASES = [
    "loop-forever",
    "alloc-50gb",
    "fork-outlives",
    "socket-localhost",
    "env-secret-scan",
    "write-outside",
    "print-megabytes",
    "exit-early",
    "raise-midway",
    "missing-module",
]


def test_every_outcome_is_distinct(bad_run: tuple[Path, VerifyRun]) -> None:
    """No two of the issue's bad inputs share an (outcome, problem code) pair; the good script still passed."""
    _root, run = bad_run
    by_slug = {r["slug"]: r for r in run.results}
    pairs = [(by_slug[s]["outcome"], [p["code"] for p in by_slug[s]["problems"]]) for s in ISSUE_CASES]
    assert len({(o, tuple(c)) for o, c in pairs}) == len(ISSUE_CASES), pairs
    assert next(r for r in run.results if r["slug"] == "base-question")["outcome"] == "pass"


def test_forked_child_is_killed(bad_run: tuple[Path, VerifyRun]) -> None:
    root, run = bad_run
    result = next(r for r in run.results if r["slug"] == "fork-outlives")
    assert "verify-stray-process" in {p["code"] for p in result["problems"]}
    # the child's pid is one of the sandbox's PID namespace; on the host, no launcher of this repo is left
    alive = []
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmd = stat.read_bytes()
        except OSError:
            continue
        if b"qbank.verify.launch" in cmd and str(root).encode() in cmd:
            alive.append(stat.parent.name)
    assert alive == []


def test_secret_never_reaches_scripts(bad_run: tuple[Path, VerifyRun]) -> None:
    root, run = bad_run
    scan = next(r for r in run.results if r["slug"] == "env-secret-scan")
    assert scan["outcome"] == "pass"
    entry = store.read_entry(root, "env-secret-scan")
    assert entry is not None
    printed = entry["derivation"]
    assert "HOME" in printed and "AWS_SECRET_ACCESS_KEY" not in printed and SECRET not in printed
    assert (
        "KeyError: 'AWS_SECRET_ACCESS_KEY'" in next(r for r in run.results if r["slug"] == "env-secret-read")["message"]
    )


def test_writes_outside_are_refused(bad_run: tuple[Path, VerifyRun]) -> None:
    root, _run = bad_run
    assert not (root / "written-by-script.txt").exists()


def test_socket_reached_nothing(bad_run: tuple[Path, VerifyRun], listener: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        listener.accept()


def test_output_is_truncated_and_the_script_goes_on(bad_run: tuple[Path, VerifyRun]) -> None:
    root, run = bad_run
    result = next(r for r in run.results if r["slug"] == "print-megabytes")
    assert result["claims"] == 1
    md = store.read_entry(root, "print-megabytes")
    assert md is not None and 900_000 < len(md["derivation"]) < 1_300_000


def test_sandbox_in_force_is_reported(bad_run: tuple[Path, VerifyRun]) -> None:
    _root, run = bad_run
    sandbox = next(r for r in run.results if r["slug"] == "base-question")["sandbox"]
    # the wall is required: no weaker fallback is accepted
    assert sandbox["network"] == "namespace"
    assert sandbox["fs"] == "bwrap+audit-hook"


def _one(root: Path, slug: str, **opts: Any) -> dict[str, Any]:
    """One run; the old layer modes (network=, fs=) exist only under --trust-local, so they imply it."""
    if "network" in opts or "fs" in opts:
        opts.setdefault("trust_local", True)
    run = verify(root, VerifyConfig(slugs=[slug], force=True, options=RunOptions(**{"static_check": False, **opts})))
    return run.results[0]


def test_network_namespace_mode(vrepo: Path, listener: socket.socket) -> None:
    """Forced namespace mode: the kernel has no route anywhere (a host without namespaces: test_fail_closed)."""
    require("netns")
    place(vrepo, BAD / "socket-localhost.py", listener.getsockname()[1])
    result = _one(vrepo, "socket-localhost", network="namespace")
    assert (result["outcome"], result["problems"][0]["code"]) == ("error", "verify-network")
    assert "Network is unreachable" in result["message"]


def test_socket_refusal_mode(vrepo: Path, listener: socket.socket) -> None:
    """Forced in-interpreter mode: socket creation itself is refused, even with a network present."""
    place(vrepo, BAD / "socket-localhost.py", listener.getsockname()[1])
    result = _one(vrepo, "socket-localhost", network="socket", fs="audit")
    assert (result["outcome"], result["problems"][0]["code"]) == ("error", "verify-network")
    assert "network access is disabled" in result["message"]
    with pytest.raises(BlockingIOError):
        listener.accept()


def test_readonly_mount_mode(vrepo: Path) -> None:
    """Forced mount mode alone: the kernel refuses writes to the repository (EROFS)."""
    require("netns")
    place(vrepo, BAD / "write-outside.py", 0)
    result = _one(vrepo, "write-outside", fs="mount")
    assert (result["outcome"], result["problems"][0]["code"]) == ("error", "verify-sandbox-write")
    assert "Read-only file system" in result["message"]
    assert not (vrepo / "written-by-script.txt").exists()


def test_audit_mode_refuses_writes_anywhere_outside(vrepo: Path, tmp_path: Path) -> None:
    """Forced audit mode alone: writes outside the run folder are refused, in the repository or not."""
    target = tmp_path / "elsewhere.txt"
    add_script(
        vrepo,
        "write-tmp",
        f"from qbank.verify import claim\nopen({str(target)!r}, 'w').write('x')\nclaim('x', 1)\n",
    )
    result = _one(vrepo, "write-tmp", network="socket", fs="audit")
    assert (result["outcome"], result["problems"][0]["code"], result["problems"][0]["line"]) == (
        "error",
        "verify-sandbox-write",
        2,
    )
    assert not target.exists()
    place(vrepo, BAD / "write-outside.py", 0)
    assert _one(vrepo, "write-outside", network="socket", fs="audit")["problems"][0]["code"] == "verify-sandbox-write"
    assert not (vrepo / "written-by-script.txt").exists()


def test_working_directory_is_writable(vrepo: Path) -> None:
    add_script(
        vrepo,
        "scratch",
        "import os, tempfile\nfrom qbank.verify import check\n"
        "open('scratch.txt', 'w').write('ok')\n"
        "with tempfile.NamedTemporaryFile() as fh:\n    fh.write(b'x')\n"
        "check(open('scratch.txt').read() == 'ok' and os.getcwd() != '/', 'own folder is writable')\n",
    )
    assert _one(vrepo, "scratch")["outcome"] == "pass"


def test_env_is_allowlisted(vrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fake")
    add_script(
        vrepo,
        "env",
        "import os\nfrom qbank.verify import claim\nfor k in sorted(os.environ):\n    print(k)\nclaim('n', 1)\n",
    )
    _one(vrepo, "env")
    entry = store.read_entry(vrepo, "env")
    assert entry is not None
    printed = set(entry["derivation"].split())
    assert "GITHUB_TOKEN" not in printed
    assert {"HOME", "PYTHONPATH", "QBANK_VERIFY_OUT", "QBANK_FACTS", "QBANK_DEVICE"} <= printed
    assert os.environ["GITHUB_TOKEN"] == "ghp_fake"


def test_socket_refusal_mode_refuses_programs(vrepo: Path) -> None:
    """Without a namespace a child program would have the network, so starting one is refused too."""
    add_script(
        vrepo,
        "spawn",
        "import subprocess, sys\nfrom qbank.verify import claim\nsubprocess.run([sys.executable, '-c', ''])\n"
        "claim('x', 1)\n",
    )
    result = _one(vrepo, "spawn", network="socket", fs="audit")
    assert (result["outcome"], result["problems"][0]["code"], result["problems"][0]["line"]) == (
        "error",
        "verify-sandbox-exec",
        3,
    )
    # under the wall a child (of what the view holds: the interpreter) runs inside the same namespaces
    assert _one(vrepo, "spawn")["outcome"] == "pass"


# every credential path the runner hides, named here rather than read from SECRET_PATHS, with a file planted in each
CREDENTIALS = {
    ".aws": ".aws/credentials",
    ".ssh": ".ssh/id_ed25519",
    ".gnupg": ".gnupg/private-keys-v1.d/key.key",
    ".docker": ".docker/config.json",
    ".kube": ".kube/config",
    ".config/gh": ".config/gh/hosts.yml",
    ".netrc": ".netrc",
    ".git-credentials": ".git-credentials",
    ".pypirc": ".pypirc",
}


def test_the_hidden_list_is_the_named_list() -> None:
    """Adding a credential path to the runner without planting it below (or dropping one) fails."""
    from qbank.verify.runner import SECRET_PATHS

    assert sorted(SECRET_PATHS) == sorted(CREDENTIALS)


@pytest.mark.parametrize("fs", ["auto", "audit"])
def test_credential_files_are_hidden(vrepo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fs: str) -> None:
    """Each of the user's credential files stays out of reach: covered in the mount namespace, else refused on open."""
    home = tmp_path / "home"
    for rel in CREDENTIALS.values():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"secret = {SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    paths = [str(home / rel) for rel in CREDENTIALS.values()]
    add_script(
        vrepo,
        "steal",
        "from qbank.verify import check\n"
        "def read(p):\n"
        "    try:\n        return open(p).read()\n"
        "    except OSError as exc:\n        return type(exc).__name__\n"
        f"got = [read(p) for p in {paths!r}]\n"
        "print('|'.join(got))\n"
        "check(not any('secret' in g for g in got), 'no credential was readable')\n",
    )
    result = _one(vrepo, "steal") if fs == "auto" else _one(vrepo, "steal", fs=fs, network="socket")
    assert result["outcome"] == "pass", result
    entry = store.read_entry(vrepo, "steal")
    assert entry is not None and SECRET not in entry["derivation"]
    # --trust-local: the audit hook refuses each open; the wall: no home folder in the sandbox's view at all
    refusal = "SandboxReadError" if fs == "audit" else "FileNotFoundError"
    assert "|".join([refusal] * len(CREDENTIALS)) in entry["derivation"]


def test_unprivileged_user_gets_namespaces_through_a_user_namespace(tmp_path: Path) -> None:
    """A non-root user (here: nobody) still gets the network namespace and read-only repository."""
    require("root", "setpriv")
    import sys
    import tempfile

    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # an interpreter under a root-only folder (/root/.pyenv, /root at 0700) is made reachable in a private
    # mount namespace, as the attack suite does: nothing on the host changes, nothing is skipped
    from .attacks.conftest import reachable_prefix

    as_nobody = [*reachable_prefix(), *as_nobody]
    base = Path(tempfile.mkdtemp(prefix="qbank-nobody-"))
    try:
        base.chmod(0o777)
        root = base / "repo"
        shutil.copytree(CASES / "base", root, ignore=CASE_IGNORE)
        place(root, BAD / "write-outside.py", 0)
        subprocess.run(["chmod", "-R", "a+rwX", str(base)], check=True)
        # the static check would refuse write-outside.py first: the attack suite's driver turns it off
        drive = str(Path(__file__).parent / "attacks" / "drive.py")
        cmd = [*as_nobody, sys.executable, drive, "verify", "--root", str(root), "--format", "json"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HOME": str(base)})
        results = {r["slug"]: r for r in json.loads(proc.stdout)["results"]}
        assert results["base-question"]["outcome"] == "pass"
        assert results["write-outside"]["problems"][0]["code"] == "verify-sandbox-write"
        entry = json.loads((root / store.ENTRIES / "base-question.json").read_text())
        sandbox = entry["result"]["sandbox"]
        assert sandbox["network"] == "namespace"  # the wall, or nothing runs
        assert not (root / "written-by-script.txt").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
