"""Run options shared by the engine and the runner (kept apart so a warm run imports no runner code)."""

from __future__ import annotations

from dataclasses import dataclass

GiB = 1 << 30


@dataclass(frozen=True)
class RunOptions:
    """How scripts run: sandbox modes, limits and device; the defaults are the production settings."""

    device: str = "cpu"
    network: str = "auto"
    """With ``trust_local`` only: auto (namespace, else socket refusal), namespace (required) or socket."""
    fs: str = "auto"
    """With ``trust_local`` only: auto (read-only repository mount where possible, plus audit hook), mount, audit."""
    mem_bytes: int | None = 4 * GiB
    output_cap: int = 1 << 20
    fsize_bytes: int = 256 << 20
    threads: int = 1
    fake_cuda: str | None = None
    """Test hook: a GPU name; the CPU stands in for CUDA and the device stamp is fake."""
    extra_env: tuple[tuple[str, str], ...] = ()
    static_check: bool = True
    """Refuse to run scripts that fail ``lint.lint_script``; off only in tests of the walls underneath."""
    trust_local: bool = False
    """``--trust-local``: no bubblewrap wall, only the old in-process layers (never the default; refused in CI)."""
