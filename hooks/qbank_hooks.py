"""mkdocs hooks: thin adapters that hand mkdocs the pages qbank renders. No logic lives here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from qbank.corpus import load_corpus
from qbank.render.pages import render_pages

_STATE: dict[str, Any] = {}


def on_config(config: Any) -> Any:
    """Load the corpus once per build; `qbank build` has already refused a corpus with errors."""
    root = Path(config["config_file_path"]).parent
    corpus, _report = load_corpus(root)
    _STATE["corpus"] = corpus
    return config


def on_files(files: Files, config: Any) -> Files:
    """Add every generated page in memory (no stub files on disk)."""
    for page in render_pages(_STATE["corpus"]):
        files.append(File.generated(config, page.path, content=page.markdown))
    return files


def on_post_build(config: Any) -> None:
    """Write `_headers` and `_redirects` for CDN hosts (and `qbank serve --built`)."""
    from qbank.deploy.headers import write_host_files

    write_host_files(Path(config["site_dir"]))
