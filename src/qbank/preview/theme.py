"""The theme's Jinja work a preview session keeps between saves: compiled templates and the theme's file list.

mkdocs builds a new Jinja environment for every build, so each save compiled material's templates again (about
30 of them) and walked the theme folders to list their files (thousands of icons and assets) before filtering
them: together most of a save's build at 1,000 questions (``bench/serve_profile.py``). A session keeps the
compiled templates as bytecode (Jinja checks each against its template's source, so an edited override is
compiled again) and the theme's file list for as long as the layout fingerprint is the same (the overrides,
hooks and config are in it; a changed one lists again).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import jinja2
from jinja2.bccache import Bucket


class MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates in memory, by template (Jinja refuses an entry whose source checksum differs)."""

    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        """Fill ``bucket`` from the store, if it holds this template."""
        code = self.store.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Keep a freshly compiled template."""
        self.store[bucket.key] = bucket.bytecode_to_string()


@dataclass
class ThemeMemo:
    """What a preview session keeps of the theme between builds."""

    bytecode: MemoryBytecodeCache = field(default_factory=MemoryBytecodeCache)
    listed: dict[Hashable, list[str]] = field(default_factory=dict)
    """The theme's template list, by theme folders, layout fingerprint and filter."""


def remember_theme(config: Any, memo: ThemeMemo, layout: Hashable) -> None:
    """Make the environments of ``config``'s theme use ``memo`` (compiled templates, the file list)."""
    theme = config.theme
    make_env: Callable[[], jinja2.Environment] = theme.get_env

    def get_env() -> jinja2.Environment:
        env = make_env()
        env.bytecode_cache = memo.bytecode
        list_all = env.list_templates

        def list_templates(extensions: Any = None, filter_func: Any = None) -> list[str]:
            # mkdocs passes a new closure each build; it depends only on the config (in the layout fingerprint)
            key = (tuple(theme.dirs), layout, repr(extensions), getattr(filter_func, "__qualname__", filter_func))
            if key not in memo.listed:
                memo.listed.clear()  # one layout at a time
                memo.listed[key] = list(list_all(extensions, filter_func))
            return list(memo.listed[key])

        setattr(env, "list_templates", list_templates)  # noqa: B010 - an instance attribute over the method
        return env

    setattr(theme, "get_env", get_env)  # noqa: B010
