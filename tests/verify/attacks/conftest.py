"""The attack-suite harness: a site repository with a hostile overlay, planted canaries, one stage run.

Format: docs in the case folders' ``case.yaml`` (attack, stage, expect, as, canaries_absent); see
``test_attacks.py``. Placeholders in overlay files: @REPO@, @HOME@, @LEDGER@, @SOCKET@, @CASE@.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO, make_site_repo

CASES = Path(__file__).parent / "cases"
SITE = REPO / "tests" / "cases" / "site"
NOBODY = 65534
ENV_CANARIES = {"AWS_SECRET_ACCESS_KEY": "AKIA-CANARY-aws-3f9d2c", "GITHUB_TOKEN": "ghp_CANARY_token_8b1e77"}
SSH_CANARY = "-----BEGIN OPENSSH PRIVATE KEY----- CANARY-ssh-41c0"
AWS_FILE_CANARY = "aws_secret_access_key = CANARY-awsfile-77aa"
GIT_CANARY = "CANARY-dotgit-19ef"
QBANK_CANARY = "CANARY-dotqbank-5d20"


@dataclass
class Attack:
    """One case, set up and run."""

    name: str
    spec: dict[str, Any]
    base: Path
    repo: Path
    home: Path
    ledger: Path
    sock: Path
    canaries: list[str] = field(default_factory=list)
    before: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    returncode: int = 0


def load_case(name: str) -> dict[str, Any]:
    """The case's ``case.yaml`` with defaults."""
    spec = yaml.safe_load((CASES / name / "case.yaml").read_text(encoding="utf-8"))
    spec.setdefault("stage", "verify")
    spec.setdefault("as", ["root", "user"])
    spec.setdefault("canaries_absent", True)
    return dict(spec)


def blocked_folders() -> list[Path]:
    """Folders above this interpreter, its prefixes or the repository that others cannot enter (outermost first)."""
    out: list[Path] = []
    for path in (Path(os.path.realpath(sys.executable)), Path(sys.prefix).resolve(), Path(sys.base_prefix), REPO):
        for folder in reversed(path.parents):
            if not folder.stat().st_mode & 0o001 and folder not in out:
                out.append(folder)
                break  # the outermost one: the namespace below opens the path under it
    return out


def reachable_prefix() -> list[str]:
    """A command prefix that makes the interpreter reachable for an unprivileged uid, changing nothing on the host.

    When the interpreter lives under a folder others cannot enter (a pyenv under a mode-700 ``/root``), a
    private mount namespace covers that folder with a world-enterable tmpfs and binds back just the
    children on the way to the interpreter, the venv and the repository; the user's own rights are as
    before everywhere else. Needs root; empty when nothing is blocked.
    """
    blocked = blocked_folders()
    if not blocked:
        return []
    needed = [Path(os.path.realpath(sys.executable)), Path(sys.prefix).resolve(), Path(sys.base_prefix), REPO]
    lines = ["set -e", 'stage=$(mktemp -d)', 'mount -t tmpfs tmpfs "$stage"']
    for n, folder in enumerate(blocked):
        children = sorted({p.relative_to(folder).parts[0] for p in needed if p.is_relative_to(folder) and p != folder})
        lines += [f'mkdir "$stage/{n}"', f"mount --bind '{folder}' \"$stage/{n}\"",
                  f"mount -t tmpfs -o mode=755 tmpfs '{folder}'"]
        for child in children:
            lines += [f"mkdir -p '{folder / child}'", f"mount --bind \"$stage/{n}/{child}\" '{folder / child}'"]
    lines.append('exec "$@"')
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", "\n".join(lines), "sh"]


def interpreter_reachable_by(uid: int) -> str | None:
    """Why uid cannot start this interpreter (a folder above it others cannot enter), or None."""
    for path in (Path(os.path.realpath(sys.executable)), Path(sys.prefix)):
        for folder in path.parents:
            if not folder.stat().st_mode & 0o001:
                return f"{folder} is not enterable by others, so uid {uid} cannot run {path}"
    return None


def tree(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Path -> sha256 of every file (and symlink target) under root."""
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            continue
        if p.is_symlink():
            out[rel] = "->" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def setup(name: str, as_user: bool) -> Attack:
    """Build the repository with the overlay and plant every canary."""
    spec = load_case(name)
    base = Path(tempfile.mkdtemp(prefix=f"qbank-attack-{name}-"))
    repo, home, ledger_dir = base / "repo", base / "home", base / "ledger"
    make_site_repo(repo, SITE)
    home.mkdir()
    ledger_dir.mkdir()
    ledger = ledger_dir / "ledger.sqlite3"
    # one host socket per case, caller and worker: the root and user runs of a case can run at once under xdist,
    # and a shared path let one's unlink-then-bind race the other's (EADDRINUSE)
    who = "user" if as_user else "root"
    sock = Path(tempfile.gettempdir()) / f"qbank-attack-sock-{name}-{who}-{os.getpid()}"
    atk = Attack(name, spec, base, repo, home, ledger, sock)
    (home / ".ssh").mkdir(mode=0o700)
    (home / ".ssh" / "id_canary").write_text(SSH_CANARY + "\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(AWS_FILE_CANARY + "\n")
    (repo / ".git" / "canary").write_text(GIT_CANARY)
    (repo / ".qbank").mkdir(exist_ok=True)
    (repo / ".qbank" / "canary").write_text(QBANK_CANARY)
    minted = subprocess.run(
        [sys.executable, "-m", "qbank.cli", "license", "mint", "--count", "1", "--ledger", str(ledger)],
        capture_output=True,
        text=True,
        env=_env(atk),
        check=True,
    )
    atk.canaries = [*ENV_CANARIES.values(), SSH_CANARY, AWS_FILE_CANARY, GIT_CANARY, QBANK_CANARY]
    atk.canaries += [w for w in minted.stdout.split() if len(w) >= 16]  # the license key itself
    subs = {"@REPO@": str(repo), "@HOME@": str(home), "@LEDGER@": str(ledger), "@SOCKET@": str(sock), "@CASE@": name}
    overlay = CASES / name
    for src in sorted(overlay.rglob("*")):
        rel = src.relative_to(overlay)
        if src.is_dir() or str(rel) == "case.yaml":
            continue
        text = src.read_text(encoding="utf-8")
        for k, v in subs.items():
            text = text.replace(k, v)
        dest = repo / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        if "CANARY" in text and rel.parts[0] == "verify" and rel.suffix != ".py":
            atk.canaries.append(text.strip())
    for rel in spec.get("chmod_0600", []):
        (repo / rel).chmod(0o600)
    if as_user:
        base.chmod(0o755)
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(repo), str(home), str(ledger_dir)], check=True)
        for rel in spec.get("chmod_0600", []):
            os.chown(repo / rel, 0, 0)
    atk.before = snapshot(atk)
    return atk


def snapshot(atk: Attack) -> dict[str, str]:
    """Everything outside the run folder a script might change (the stage's own .qbank writes excepted: only a
    build draws social cards, so a verify or check stage that changes the card store is caught)."""
    own = (".qbank/cache", ".qbank/derivations", ".qbank/verify", ".qbank/release", "site")
    if atk.spec["stage"] == "build":
        own += (".qbank/cards",)
    out = {f"repo/{k}": v for k, v in tree(atk.repo, skip=own).items()}
    out.update({f"home/{k}": v for k, v in tree(atk.home).items()})
    out.update({f"ledger/{k}": v for k, v in tree(atk.ledger.parent).items()})
    return out


def _env(atk: Attack) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"CI"} or v.lower() == "true"}
    env.update(ENV_CANARIES)
    env.update(HOME=str(atk.home), QBANK_LEDGER=str(atk.ledger), PYTHONPATH=str(REPO / "src"))
    return env


def run_stage(atk: Attack, as_user: bool, *, static_check: bool = True) -> dict[str, Any]:
    """Run the case's stage on the repository (as uid 65534 under setpriv when ``as_user``).

    ``static_check=False`` goes through ``drive.py`` (the CLI with the static check off), so the attack
    meets the sandbox itself.
    """
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    atk.sock.unlink(missing_ok=True)
    listener.bind(str(atk.sock))
    atk.sock.chmod(0o777)
    listener.listen(1)
    prefix = [*reachable_prefix(), "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if as_user else []
    entry = ["-m", "qbank.cli"] if static_check else [str(Path(__file__).with_name("drive.py"))]
    cmd = [*prefix, sys.executable, *entry, atk.spec["stage"], "--format", "json", "--root", str(atk.repo)]
    if atk.spec["stage"] == "verify":
        cmd.append("--force")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(atk), timeout=300, cwd=atk.base)
    finally:
        listener.close()
    atk.stdout, atk.stderr, atk.returncode = proc.stdout, proc.stderr, proc.returncode
    try:
        return dict(json.loads(proc.stdout))
    except ValueError:
        return {}


def codes(report: dict[str, Any]) -> set[str]:
    """Every problem code in a JSON report (results' problems, or a flat problem list)."""
    out = {p["code"] for r in report.get("results", []) for p in r.get("problems", [])}
    out |= {p.get("code", "") for p in report.get("problems", []) if isinstance(p, dict)}
    return out


def alive(atk: Attack) -> list[str]:
    """Host processes whose command line names this case's repository (the attack's leftovers)."""
    out = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            data = cmdline.read_bytes()
        except OSError:
            continue
        if str(atk.base).encode() in data:  # the case's own folder: the root and user runs of a case differ
            out.append(f"{cmdline.parent.name}: {data[:120]!r}")
    return out


def cleanup(atk: Attack) -> None:
    """Remove the case's folders and evidence files."""
    shutil.rmtree(atk.base, ignore_errors=True)
    atk.sock.unlink(missing_ok=True)
