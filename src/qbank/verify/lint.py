"""Static check of verification scripts: what would let a script tamper with its own process or reach outside.

Pure: source text in, positioned problems out. The engine refuses to run a script that fails it, and
``qbank check`` reports it, so a reviewer sees every such line with its position before anything runs.

Imports are an **allowlist** (what the repository's scripts import, plus a few pure standard modules):
a denylist has to name every way out of the process (``ctypes``, ``os``, ``importlib``, ``pickle``,
``pathlib``, ``operator.attrgetter``, ``string.Formatter`` ...) and a new module that nobody listed gets
through; an allowlist fails closed, and widening it is a reviewed change of this file. Allowed modules
still leak the process (``torch.ctypes``, ``random._os``, ``torch.load`` unpickling), so attribute access
is checked too: dunders, private names of modules, frame and code objects, monkeypatching of modules,
and names that open a way out wherever they appear.

Codes (all errors): ``verify-forbidden-import``, ``verify-forbidden-call``, ``verify-forbidden-attribute``,
``verify-private-api`` (anything of ``qbank`` that is not the script API), ``verify-syntax`` (a cell that
does not parse: refused before anything runs).
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..problems import Problem, error
from .cells import padded, split_cells

# the rules are part of the script API: bump version.API_VERSION when they change (it is in every cache key)

ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "bisect",
        "cmath",
        "collections",
        "collections.abc",
        "dataclasses",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "random",
        "re",
        "statistics",
        "time",
        "typing",
        "torch",
        "torch.nn",
        "torch.nn.functional",
        "torch.linalg",
        "torch.fft",
        "torch.special",
        "triton",
        "triton.language",
        "qbank.verify",
    }
)
API_MODULE = "qbank.verify"
API_NAMES = frozenset(
    {"check", "claim", "given", "fact", "kernel_check", "triton_check", "timing", "device", "API_VERSION"}
)
API_CALLS = frozenset({"check", "claim", "given", "fact", "kernel_check", "triton_check", "timing"})
"""The calls that declare something in the record (the runner checks record lines against them)."""

# modules whose mere name as an attribute is a way out (torch.os, torch.ctypes, json.codecs.sys ...)
ESCAPE_MODULES = frozenset(
    {
        "os", "sys", "ctypes", "cffi", "subprocess", "multiprocessing", "socket", "signal", "importlib",
        "builtins", "gc", "inspect", "posix", "pty", "shutil", "pathlib", "io", "pickle", "marshal",
        "threading", "asyncio", "runpy", "pdb", "code", "types", "resource", "fcntl", "mmap", "tempfile",
        "glob", "pkgutil", "sysconfig", "site", "faulthandler", "atexit", "concurrent", "platform", "ssl",
        "urllib", "http", "select", "selectors", "zipimport", "weakref", "codecs", "operator", "string",
    }
)  # fmt: skip
# attribute names that load native code, unpickle or reach frames, whatever object they hang on
ESCAPE_ATTRS = frozenset(
    {
        "load_library", "cpp_extension", "load_inline", "hub", "ctypeslib",
        "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace",
        "tb_frame", "tb_next", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code",
        "co_code", "co_consts", "RECORD", "Record",
    }
)  # fmt: skip
# members of an allowed module that write files, unpickle or spawn: forbidden when reached from it
MODULE_MEMBERS = {
    "torch": frozenset(
        {"load", "save", "classes", "library", "package", "multiprocessing", "distributed", "ops", "utils"}
    ),
}
# Triton's package also holds its build system (``triton.runtime.build`` runs the C compiler,
# ``triton.testing.nvsmi`` runs nvidia-smi, ``triton.knobs`` sets cache and compiler paths, ``triton.compile``
# and ``triton.tools`` write and run files): scripts reach only the kernel language through it, an allowlist
TRITON_MEMBERS = frozenset({"jit", "cdiv", "next_power_of_2", "language", "Config", "autotune", "heuristics"})
# of triton.language: everything public except the compiler's own modules (``core``/``semantic`` hold
# ``builtins``, ``target_info`` queries the driver)
TRITON_LANGUAGE_DENIED = frozenset({"core", "semantic", "target_info", "extra", "standard"})
SAFE_DUNDERS = frozenset({"__init__", "__name__", "__qualname__", "__doc__", "__module__", "__file__"})
SAFE_DUNDER_NAMES = frozenset({"__name__", "__file__", "__doc__"})
DISPATCH_HOOKS = frozenset({"__torch_function__", "__torch_dispatch__", "__getattribute__", "__del__"})
# builtins that compile or import code, or hand out namespaces: forbidden wherever they are named
FORBIDDEN_BUILTINS = frozenset(
    {"__import__", "eval", "exec", "compile", "globals", "locals", "vars", "breakpoint", "help", "__build_class__"}
)
ATTR_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
PROCESS_CONTROL = {
    "os": frozenset(
        {"_exit", "fork", "forkpty", "kill", "killpg", "setsid", "setpgid", "system", "popen", "abort",
         "putenv", "unsetenv", "environ", "chdir", "execl", "execle", "execlp", "execlpe", "execv", "execve",
         "execvp", "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
         "spawnvpe", "posix_spawn", "posix_spawnp", "register_at_fork"}
    ),
    "sys": frozenset({"modules", "_getframe", "settrace", "setprofile", "addaudithook", "meta_path", "path_hooks"}),
}  # fmt: skip
READ_MODES = frozenset({"r", "rt", "tr", "rb", "br"})

# CPython 3.11 keeps the AST validator's recursion depth per interpreter, not per thread: two threads of
# the engine's pool parsing at once raise "SystemError: AST constructor recursion depth mismatch".
_PARSE_LOCK = threading.Lock()


def _parse(src: str, filename: str = "<unknown>") -> ast.Module:
    with _PARSE_LOCK:
        return ast.parse(src, filename=filename)



@dataclass
class _State:
    path: str
    local: frozenset[str]
    aliases: dict[str, str] = field(default_factory=dict)
    """Name -> the dotted module path it stands for (``np`` -> ``numpy``, ``F`` -> ``torch.nn.functional``)."""
    problems: list[Problem] = field(default_factory=list)
    local_imports: set[str] = field(default_factory=set)

    def add(self, node: ast.AST, code: str, message: str) -> None:
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1
        self.problems.append(error(self.path, line, col, code, message))


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``torch.nn.functional`` for an attribute chain rooted at a name bound to an imported module."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(parts)])
    return None


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _module_allowed(name: str, local: frozenset[str]) -> bool:
    return name in ALLOWED_MODULES or name.split(".")[0] in local


def _check_member(st: _State, node: ast.AST, base: str | None, attr: str, store: bool = False) -> None:
    """The rules for ``<base>.<attr>`` (``base`` the dotted module path when the chain starts at a module)."""
    root = base.split(".")[0] if base else None
    if base == "qbank" and attr == "verify" and not store:
        return
    if (
        base is not None
        and (base == "qbank" or base.startswith("qbank."))
        and (base != API_MODULE or attr not in API_NAMES or store)
    ):
        st.add(node, "verify-private-api", f"{base}.{attr}: only the script API ({API_MODULE}) may be used")
        return
    if attr in {"RECORD", "Record"}:
        st.add(node, "verify-private-api", f".{attr}: the API's record belongs to the runner")
    elif _is_dunder(attr) and attr not in SAFE_DUNDERS:
        st.add(node, "verify-forbidden-attribute", f".{attr}: dunder attributes reach the interpreter's internals")
    elif attr in ESCAPE_ATTRS or attr in ESCAPE_MODULES:
        st.add(node, "verify-forbidden-attribute", f".{attr}: reaches native code, frames or another module")
    elif base is not None and root in PROCESS_CONTROL and attr in PROCESS_CONTROL[root]:
        st.add(node, "verify-forbidden-call", f"{base}.{attr}: process control is not for scripts")
    elif base is not None and attr.startswith("_"):
        st.add(node, "verify-forbidden-attribute", f"{base}.{attr}: private names of a module")
    elif base is not None and root in MODULE_MEMBERS and attr in MODULE_MEMBERS[root]:
        st.add(node, "verify-forbidden-attribute", f"{base}.{attr}: writes files, unpickles or loads code")
    elif base is not None and _triton_refused(base, attr):
        st.add(node, "verify-forbidden-attribute", f"{base}.{attr}: only Triton's kernel language is for scripts")
    elif base is not None and store:
        st.add(node, "verify-forbidden-attribute", f"{base}.{attr}: assigning to a module's attribute")


def _triton_refused(base: str, attr: str) -> bool:
    """Whether ``<base>.<attr>`` leaves Triton's kernel language (its compiler, runtime, testing, tools)."""
    if base == "triton":
        return attr not in TRITON_MEMBERS
    if base == "triton.language":
        return attr in TRITON_LANGUAGE_DENIED
    return base.startswith("triton.") and base.split(".")[1] != "language"


def _literal_str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _visit_import(st: _State, node: ast.Import | ast.ImportFrom) -> None:
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.name == "qbank" or (a.name.startswith("qbank.") and a.name != API_MODULE):
                st.add(node, "verify-private-api", f"import {a.name}: only the script API ({API_MODULE}) may be used")
                continue
            if not _module_allowed(a.name, st.local):
                st.add(node, "verify-forbidden-import", f"import {a.name}: not a module scripts may use")
            elif a.name.split(".")[0] in st.local:
                st.local_imports.add(a.name.split(".")[0])
            if a.asname:
                st.aliases[a.asname] = a.name
            else:
                st.aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        return
    mod = node.module or ""
    if node.level:
        st.add(node, "verify-forbidden-import", f"from {'.' * node.level}{mod} import: relative imports")
        return
    if mod == "qbank" or (mod.startswith("qbank.") and mod != API_MODULE):
        st.add(node, "verify-private-api", f"from {mod} import: only the script API ({API_MODULE}) may be used")
        return
    if not _module_allowed(mod, st.local):
        st.add(node, "verify-forbidden-import", f"from {mod} import: not a module scripts may use")
        for a in node.names:  # later uses still get their own positions (os._exit, sys.modules ...)
            st.aliases[a.asname or a.name] = f"{mod}.{a.name}"
        return
    if mod.split(".")[0] in st.local:
        st.local_imports.add(mod.split(".")[0])
    for a in node.names:
        if mod == API_MODULE and a.name != "*" and a.name not in API_NAMES:
            st.add(node, "verify-private-api", f"from {mod} import {a.name}: not part of the script API")
        elif a.name.startswith("_") or a.name in ESCAPE_MODULES or a.name in ESCAPE_ATTRS:
            st.add(node, "verify-forbidden-import", f"from {mod} import {a.name}: a private or escaping name")
        elif mod.split(".")[0] in MODULE_MEMBERS and a.name in MODULE_MEMBERS[mod.split(".")[0]]:
            st.add(node, "verify-forbidden-import", f"from {mod} import {a.name}: writes files or loads code")
        elif a.name != "*" and _triton_refused(mod, a.name):
            st.add(node, "verify-forbidden-import", f"from {mod} import {a.name}: only Triton's kernel language")
        elif a.name == "*" and mod.split(".")[0] == "triton":
            st.add(node, "verify-forbidden-import", f"from {mod} import *: name what the kernel uses")
        elif f"{mod}.{a.name}" in ALLOWED_MODULES:
            st.aliases[a.asname or a.name] = f"{mod}.{a.name}"


def _visit_call(st: _State, node: ast.Call) -> None:
    func = node.func
    if not isinstance(func, ast.Name):
        return
    if func.id == "open":
        mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
        text = "r" if mode is None else _literal_str(mode)
        if (
            text not in READ_MODES
            or any(k.arg is None for k in node.keywords)
            or any(isinstance(a, ast.Starred) for a in node.args)
        ):
            st.add(
                node, "verify-forbidden-call", "open(): scripts may only open files for reading, with a literal mode"
            )
    elif func.id in ATTR_BUILTINS:
        name = _literal_str(node.args[1]) if len(node.args) > 1 else None
        if name is None:
            st.add(node, "verify-forbidden-call", f"{func.id}(): the attribute name must be a string literal")
            return
        base = _dotted(node.args[0], st.aliases)
        _check_member(st, node, base, name, store=func.id in {"setattr", "delattr"})


def _visit(st: _State, tree: ast.AST) -> None:
    called: set[int] = set()
    for node in ast.walk(tree):  # aliases first, so uses before a later import still resolve
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _visit_import(st, node)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            base = _dotted(node.value, st.aliases)
            if base is not None:
                st.aliases[node.targets[0].id] = base
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            _visit_call(st, node)
            if isinstance(node.func, ast.Name):
                called.add(id(node.func))
        elif isinstance(node, ast.Attribute):
            base = _dotted(node.value, st.aliases)
            _check_member(st, node, base, node.attr, store=isinstance(node.ctx, (ast.Store, ast.Del)))
        elif isinstance(node, ast.Name):
            if node.id in FORBIDDEN_BUILTINS:
                st.add(node, "verify-forbidden-call", f"{node.id}: compiles, imports or exposes namespaces")
            elif node.id in ATTR_BUILTINS | {"open"} and id(node) not in called:
                st.add(node, "verify-forbidden-call", f"{node.id} used as a value: call it directly, with literals")
            elif _is_dunder(node.id) and node.id not in SAFE_DUNDER_NAMES:
                st.add(node, "verify-forbidden-attribute", f"{node.id}: interpreter internals")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DISPATCH_HOOKS:
            st.add(node, "verify-forbidden-attribute", f"def {node.name}: overrides how torch or Python dispatch")
        elif isinstance(node, ast.MatchClass):
            for attr in node.kwd_attrs:
                if _is_dunder(attr) or attr in ESCAPE_ATTRS:
                    st.add(node, "verify-forbidden-attribute", f"case ...({attr}=): a pattern reaching {attr}")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                if _is_dunder(name):
                    st.add(node, "verify-forbidden-attribute", f"global {name}: interpreter internals")


def code_cells(text: str) -> list[str]:
    """Each code cell as the launcher compiles it (padded, so line numbers are the script's own)."""
    return [padded(c) for c in split_cells(text) if c.kind == "code"]


def lint_source(text: str, path: str, local_modules: Iterable[str] = ()) -> list[Problem]:
    """Problems of one script or shared module; ``local_modules`` are the importable names in ``verify/_lib``.

    The script is parsed cell by cell, exactly as the launcher compiles it (a ``# %%`` inside a string
    starts a new cell there, so parsing the whole file would see different code).
    """
    problems, _imports = _lint(text, path, frozenset(local_modules))
    return problems


def _lint(text: str, path: str, local: frozenset[str]) -> tuple[list[Problem], set[str]]:
    st = _State(path, local)
    for src in code_cells(text):
        try:
            tree = _parse(src, path)
        except SyntaxError as exc:
            # refused before anything runs: the engine never executes a script it could not read
            st.problems.append(
                error(path, exc.lineno or 0, exc.offset or 0, "verify-syntax", f"syntax error: {exc.msg}")
            )
            continue
        _visit(st, tree)
    unique = sorted(set(st.problems), key=lambda p: (p.line, p.col, p.code, p.message))
    return unique, st.local_imports


def local_modules(root: Path) -> frozenset[str]:
    """Importable names in ``verify/_lib``: ``name.py`` files and packages."""
    lib = root / "verify" / "_lib"
    if not lib.is_dir():
        return frozenset()
    names = {p.stem for p in lib.glob("*.py")} | {p.name for p in lib.iterdir() if (p / "__init__.py").is_file()}
    return frozenset(n for n in names if n.isidentifier())


def lint_script(root: Path, rel: str) -> tuple[list[Problem], list[str]]:
    """Problems of ``rel`` (``verify/<slug>.py``) and of every ``verify/_lib`` module it imports, transitively;
    with the files read (repository-relative), so a cached verdict goes stale when one of them changes."""
    local = local_modules(root)
    todo, seen = [rel], set()
    problems: list[Problem] = []
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        try:
            text = (root / cur).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(error(cur, 0, 0, "verify-syntax", f"cannot read: {exc}"))
            continue
        found, imports = _lint(text, cur, local)
        problems += found
        for name in sorted(imports):
            mod = root / "verify" / "_lib" / f"{name}.py"
            pkg = root / "verify" / "_lib" / name
            if mod.is_file():
                todo.append(f"verify/_lib/{name}.py")
            elif pkg.is_dir():
                todo += sorted(f"verify/_lib/{name}/{p.name}" for p in pkg.glob("*.py"))
    return problems, sorted(seen)


def declaration_lines(text: str, local_modules: Iterable[str] = ()) -> set[int]:
    """Lines of the script that hold a call to the API's declaring functions (or to a ``verify/_lib`` helper).

    A multi-line call counts on every line it spans. A script that does not parse declares nothing.
    """
    local = frozenset(local_modules)
    lines: set[int] = set()
    trees = []
    for src in code_cells(text):
        try:
            trees.append(_parse(src))
        except SyntaxError:
            continue
    # a helper imported in one cell declares in every later one (a script is one module, cells share names)
    helpers: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in local and not node.level:
                helpers |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                helpers |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in local}
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            root = f
            while isinstance(root, ast.Attribute):
                root = root.value
            if name in API_CALLS or (isinstance(root, ast.Name) and root.id in helpers):
                lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines
