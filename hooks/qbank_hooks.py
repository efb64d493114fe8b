"""mkdocs hooks: thin adapters that hand mkdocs the pages qbank renders. No logic lives here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from qbank.corpus import load_corpus
from qbank.paywall import site as paywall
from qbank.render.pages import render_pages

_STATE: dict[str, Any] = {}


def on_config(config: Any) -> Any:
    """Load the corpus once per build; `qbank build` has already refused a corpus with errors."""
    root = Path(config["config_file_path"]).parent
    corpus, _report = load_corpus(root)
    _STATE["corpus"] = corpus
    paywall.on_config(config)
    return config


def on_files(files: Files, config: Any) -> Files:
    """Add every generated page in memory (no stub files on disk)."""
    for page in render_pages(_STATE["corpus"]):
        files.append(File.generated(config, page.path, content=page.markdown))
    return files


@event_priority(100)  # first: later plugins, and search (on_page_context), only ever see sealed HTML
def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """Replace premium sections by placeholders; their ciphertext is written after the build."""
    try:
        return paywall.on_page_content(html, page, config)
    except paywall.PaywallBuildError as exc:
        raise PluginError(str(exc)) from exc


@event_priority(-100)  # last: the policy hashes the inline scripts of the final page
def on_post_page(output: str, page: Any, config: Any) -> str:
    """Add the Content-Security-Policy."""
    return paywall.on_post_page(output)


@event_priority(-100)
def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    """Add the Content-Security-Policy to theme pages such as 404.html."""
    return paywall.on_post_page(output_content) if template_name.endswith(".html") else output_content


def on_post_build(config: Any) -> None:
    """Write ciphertext and keyslot files."""
    paywall.on_post_build(config)
