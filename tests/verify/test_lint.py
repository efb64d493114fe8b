"""The static check: one case per rule with its position, the repository's scripts pass, and it gates runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qbank.verify.engine import VerifyConfig, verify
from qbank.verify.lint import declaration_lines, lint_script, lint_source

from ..conftest import REPO
from .conftest import add_script

HEAD = "from qbank.verify import check\n"
# (source after HEAD, code, line, col): every rule of lint.py, positioned
CASES = [
    ("import ctypes\n", "verify-forbidden-import", 2, 1),
    ("import cffi\n", "verify-forbidden-import", 2, 1),
    ("from importlib import import_module\n", "verify-forbidden-import", 2, 1),
    ("import subprocess\n", "verify-forbidden-import", 2, 1),
    ("import multiprocessing as mp\n", "verify-forbidden-import", 2, 1),
    ("x = 1\nimport socket\n", "verify-forbidden-import", 3, 1),
    ("from . import helper\n", "verify-forbidden-import", 2, 1),
    ("from torch import _C\n", "verify-forbidden-import", 2, 1),
    ("import os\nos._exit(0)\n", "verify-forbidden-call", 3, 1),
    ("import os\nx = os.fork()\n", "verify-forbidden-call", 3, 5),
    ("import os as o\no.kill(1, 9)\n", "verify-forbidden-call", 3, 1),
    ("import os\nos.setsid()\n", "verify-forbidden-call", 3, 1),
    ("import os\nos.execv('/bin/sh', [])\n", "verify-forbidden-call", 3, 1),
    ("import os\nos.system('id')\n", "verify-forbidden-call", 3, 1),
    ("import sys\nm = sys.modules\n", "verify-forbidden-call", 3, 5),
    ("import sys\nf = sys._getframe(0)\n", "verify-forbidden-call", 3, 5),
    ("import sys\nsys.settrace(None)\n", "verify-forbidden-call", 3, 1),
    ("__import__('ct' + 'ypes')\n", "verify-forbidden-call", 2, 1),
    ("eval('1')\n", "verify-forbidden-call", 2, 1),
    ("exec('x = 1')\n", "verify-forbidden-call", 2, 1),
    ("c = compile('1', 'f', 'eval')\n", "verify-forbidden-call", 2, 5),
    ("g = globals()\n", "verify-forbidden-call", 2, 5),
    ("f = open('x', 'w')\n", "verify-forbidden-call", 2, 5),
    ("m = 'w'\nf = open('x', m)\n", "verify-forbidden-call", 3, 5),
    ("f = open('x', mode='a')\n", "verify-forbidden-call", 2, 5),
    ("o = open\n", "verify-forbidden-call", 2, 5),
    ("import torch\ngetattr(torch, 'o' + 's')\n", "verify-forbidden-call", 3, 1),
    ("import random\nsetattr(random, n, 1)\n", "verify-forbidden-call", 3, 1),
    ("import random\ndelattr(random, n)\n", "verify-forbidden-call", 3, 1),
    ("g = getattr\n", "verify-forbidden-call", 2, 5),
    ("k = (1).__class__\n", "verify-forbidden-attribute", 2, 5),
    ("d = check.__dict__\n", "verify-forbidden-attribute", 2, 5),
    ("g = check.__globals__\n", "verify-forbidden-attribute", 2, 5),
    ("s = object.__subclasses__()\n", "verify-forbidden-attribute", 2, 5),
    ("c = check.__code__\n", "verify-forbidden-attribute", 2, 5),
    ("b = __builtins__\n", "verify-forbidden-attribute", 2, 5),
    ("import torch\nc = torch.ctypes\n", "verify-forbidden-attribute", 3, 5),
    ("import random\no = random._os\n", "verify-forbidden-attribute", 3, 5),
    ("import torch\ntorch.allclose = lambda *a, **k: True\n", "verify-forbidden-attribute", 3, 1),
    ("import torch\nT = torch.Tensor\nT.double = None\n", "verify-forbidden-attribute", 4, 1),
    ("import torch\nx = torch.load('f')\n", "verify-forbidden-attribute", 3, 5),
    ("import torch\ntorch.save(1, 'f')\n", "verify-forbidden-attribute", 3, 1),
    ("import torch\ntorch.ops.load_library('x.so')\n", "verify-forbidden-attribute", 3, 1),
    ("try:\n    1 / 0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame\n", "verify-forbidden-attribute", 5, 9),
    ("class T:\n    def __torch_function__(self): ...\n", "verify-forbidden-attribute", 3, 5),
    ("import torch\ngetattr(torch, 'ctypes')\n", "verify-forbidden-attribute", 3, 1),
    ("from qbank.verify import api\n", "verify-private-api", 2, 1),
    ("from qbank.verify.api import RECORD\n", "verify-private-api", 2, 1),
    ("import qbank.verify.api\n", "verify-private-api", 2, 1),
    ("import qbank.verify\nqbank.verify.api.RECORD.checks.clear()\n", "verify-private-api", 3, 1),
    ("import qbank.verify as v\nv._seal('checks', {})\n", "verify-private-api", 3, 1),
    ("import qbank.verify as v\nv.check = print\n", "verify-private-api", 3, 1),
    ("from qbank.verify import check\nr = check.RECORD\n", "verify-private-api", 3, 5),
    ("from qbank.units import lookup\n", "verify-private-api", 2, 1),
    ("x = (\n", "verify-syntax", 2, 5),
    # Triton: the kernel language only, never its build system, runtime, knobs, testing or tools
    ("import triton\ntriton.runtime.build.subprocess.run(['id'])\n", "verify-forbidden-attribute", 3, 1),
    ("import triton\ns = triton.testing.nvsmi(['name'])\n", "verify-forbidden-attribute", 3, 5),
    ("import triton\ntriton.knobs.cache.dir = '/tmp'\n", "verify-forbidden-attribute", 3, 1),
    ("import triton\nk = triton.compile('src')\n", "verify-forbidden-attribute", 3, 5),
    ("import triton\nd = triton.tools\n", "verify-forbidden-attribute", 3, 5),
    ("import triton\nd = triton.runtime.driver\n", "verify-forbidden-attribute", 3, 5),
    ("import triton\ngetattr(triton, 'knobs')\n", "verify-forbidden-attribute", 3, 1),
    ("import triton.language as tl\nb = tl.core.builtins\n", "verify-forbidden-attribute", 3, 5),
    ("import triton.language as tl\nb = tl.semantic\n", "verify-forbidden-attribute", 3, 5),
    ("from triton import testing\n", "verify-forbidden-import", 2, 1),
    ("from triton import *\n", "verify-forbidden-import", 2, 1),
    ("from triton.language import core\n", "verify-forbidden-import", 2, 1),
    ("import triton.testing\n", "verify-forbidden-import", 2, 1),
    ("from triton.runtime import build\n", "verify-forbidden-import", 2, 1),
]


@pytest.mark.parametrize(("src", "code", "line", "col"), CASES, ids=[c[0].splitlines()[-1][:40] for c in CASES])
def test_rule(src: str, code: str, line: int, col: int) -> None:
    found = lint_source(HEAD + src, "verify/x.py")
    assert (code, line, col) in {(p.code, p.line, p.col) for p in found}, [p.text() for p in found]
    assert all(p.level.value == "error" and p.path == "verify/x.py" for p in found)


def test_allowed_code_is_clean() -> None:
    src = HEAD + (
        "import math, random, json, re, time\nfrom collections import OrderedDict\nimport torch\n"
        "import torch.nn.functional as F\nimport qbank.verify\n"
        "class A:\n    def __init__(self) -> None:\n        self._x = 1\n"
        "f = open('data.txt')\ng = getattr(torch, 'float16')\nn = A.__name__\n"
        "if __name__ == '__main__':\n    qbank.verify.check(True, 'ok')\n"
        "p = re.compile('x')\ny = F.relu(torch.ones(2))\n"
    )
    assert lint_source(src, "verify/x.py") == []


def test_triton_kernel_language_is_clean() -> None:
    src = HEAD + (
        "import triton\nimport triton.language as tl\nfrom triton import cdiv\n"
        "from qbank.verify import triton_check\n"
        "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
        "    tl.store(x_ptr + offs, tl.math.exp(x) + tl.maximum(x, 0.0), mask=offs < n)\n"
        "grid = (triton.cdiv(10, 4), cdiv(1, 1), triton.next_power_of_2(5))\n"
    )
    assert lint_source(src, "verify/x.py") == []


def test_a_cell_marker_inside_a_string_is_linted_as_the_launcher_runs_it() -> None:
    """Cells compile separately: '# %%' in a string makes the rest code, and the check sees that code."""
    src = 'x = """\n# %%\nimport ctypes\n# %%\n"""\n'
    assert ("verify-forbidden-import", 3) in {(p.code, p.line) for p in lint_source(src, "verify/x.py")}


def test_local_lib_modules_are_allowed_and_linted(tmp_path: Path) -> None:
    (tmp_path / "verify" / "_lib").mkdir(parents=True)
    (tmp_path / "verify" / "_lib" / "helper.py").write_text("import os\n")
    (tmp_path / "verify" / "s.py").write_text("import helper\n")
    found, files = lint_script(tmp_path, "verify/s.py")
    assert [(p.path, p.line, p.code) for p in found] == [("verify/_lib/helper.py", 1, "verify-forbidden-import")]
    assert files == ["verify/_lib/helper.py", "verify/s.py"]


def test_the_repository_scripts_pass() -> None:
    scripts = sorted((REPO / "verify").glob("*.py"))
    assert len(scripts) >= 43
    for path in scripts:
        found, _files = lint_script(REPO, f"verify/{path.name}")
        assert found == [], [p.text() for p in found]


def test_declaration_lines_span_multiline_calls() -> None:
    src = "from qbank.verify import check, claim\nx = 1\ncheck(\n    x == 1,\n    'one',\n)\nclaim('x', x)\n"
    assert declaration_lines(src) == {3, 4, 5, 6, 7}


def test_a_helper_imported_in_one_cell_declares_in_a_later_one() -> None:
    src = "# %%\nfrom sheets import sheet\nx = 1\n# %%\ny = sheet('h100')\nz = y\n"
    assert declaration_lines(src, local_modules=["sheets"]) == {5}
    assert declaration_lines(src) == set()  # not a verify/_lib module: no declaration


def test_a_refused_script_never_runs(vrepo: Path, tmp_path: Path) -> None:
    """The engine gates on the check: the hostile line never executes; the result is an error with positions."""
    evidence = tmp_path / "ran"
    add_script(vrepo, "hostile", f"import pathlib\npathlib.Path({str(evidence)!r}).write_text('x')\n")
    shutil.rmtree(vrepo / ".qbank", ignore_errors=True)
    result = next(r for r in verify(vrepo, VerifyConfig(slugs=["hostile"])).results if r["slug"] == "hostile")
    assert result["outcome"] == "error" and not evidence.exists()
    assert [(p["code"], p["line"], p["col"]) for p in result["problems"]] == [("verify-forbidden-import", 1, 1)]
    assert "static check" in result["message"]
