"""Load the Triton kernels of ``verify/_lib`` through Triton's interpreter (no GPU needed).

``TRITON_INTERPRET=1`` has to be in force when ``@triton.jit`` decorates and while kernels launch
(Triton imports more of itself on the first launch), so each module is imported with the variable set
and every test here runs with it; the environment is restored afterwards, so the rest of the suite,
and the sandboxed scripts it starts, never see it. Modules load under a private name so they cannot
clash with anything else in ``sys.modules``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

LIB = Path(__file__).resolve().parents[3] / "verify" / "_lib"
_LOADED: dict[str, ModuleType] = {}


def load_interpreted(name: str) -> ModuleType:
    """``verify/_lib/<name>.py`` imported with its kernels decorated for the interpreter."""
    if name not in _LOADED:
        spec = importlib.util.spec_from_file_location(f"_interpreted_{name}", LIB / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TRITON_INTERPRET", "1")
            spec.loader.exec_module(module)
        _LOADED[name] = module
    return _LOADED[name]


@pytest.fixture(autouse=True)
def _interpret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.fixture(scope="session")
def kernels() -> Callable[[str], ModuleType]:
    return load_interpreted
