"""The CLI package: one module per command, each registering its parser; `python -m qbank.cli` runs it."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import qbank.cli
from qbank.cli import COMMANDS, build_parser
from qbank.cli.common import common_parser

from ..conftest import REPO

PACKAGE = Path(qbank.cli.__file__).parent
SHARED = {"__init__", "__main__", "common"}  # the modules that register no command


def choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of a parser, by name."""
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def readme_commands(prefix: str = "") -> set[str]:
    """The commands README's command table documents (`qbank PREFIX NAME ...` rows)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return set(re.findall(rf"^\| `qbank {prefix}([a-z][a-z-]*)", text, re.M))


def test_python_m_qbank_cli_help_exits_zero() -> None:
    res = subprocess.run([sys.executable, "-m", "qbank.cli", "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: qbank "), res.stdout


def test_python_m_qbank_cli_usage_error_exits_two() -> None:
    res = subprocess.run([sys.executable, "-m", "qbank.cli", "no-such-command"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2
    assert "invalid choice: 'no-such-command'" in res.stderr


def test_subcommands_are_the_readme_command_table() -> None:
    documented = readme_commands()
    assert {"check", "verify", "paywall"} <= documented  # the table was found
    assert set(choices(build_parser())) == documented


def test_paywall_actions_are_the_readme_command_table() -> None:
    paywall = choices(build_parser())["paywall"]
    assert set(choices(paywall)) == readme_commands("paywall ")


def test_every_command_module_registers_its_own_parsers() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} - SHARED
    assert {m.__name__.rsplit(".", 1)[1] for m in COMMANDS} == modules  # no module left out of the parser
    seen: dict[str, str] = {}
    for module in COMMANDS:
        parser = argparse.ArgumentParser(prog="qbank")
        sub = parser.add_subparsers(dest="command")
        module.register(sub, common_parser())
        names = choices(parser)
        assert names, f"{module.__name__} registers no parser"
        for name, p in names.items():
            assert name not in seen, f"{name} registered by {seen.get(name)} and {module.__name__}"
            seen[name] = module.__name__
            handlers = [p.get_default("func")] + [c.get_default("func") for c in _nested(p)]
            assert any(h is not None and h.__module__ == module.__name__ for h in handlers), name
    assert set(seen) == set(choices(build_parser()))


def _nested(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [c for a in subs for c in a.choices.values()]


def test_building_the_parser_imports_no_heavy_module() -> None:
    probe = (
        "import sys\nimport qbank.cli\nqbank.cli.build_parser()\n"
        "heavy = ('pydantic', 'mkdocs', 'material', 'markdown', 'torch', 'triton', 'cryptography', 'boto3',"
        " 'botocore', 'yaml', 'jinja2')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(('qbank.pipeline',"
        " 'qbank.model', 'qbank.corpus', 'qbank.build', 'qbank.verify', 'qbank.paywall', 'qbank.deploy',"
        " 'qbank.claims', 'qbank.schema', 'qbank.preview'))))\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
