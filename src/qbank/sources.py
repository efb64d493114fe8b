"""Reading content files with positions: bytes -> text -> YAML nodes -> validated models, problems as data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .model import RETIRED_FIELDS
from .problems import Problem, error

MAX_BYTES = 1_000_000
"""A content file larger than this is refused before parsing (a question is a few KB)."""

Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Pos:
    """A 1-based line and column."""

    line: int
    col: int


@dataclass
class Located:
    """A YAML document as plain Python data plus the position of every key and value by path."""

    data: Any
    keys: dict[Loc, Pos] = field(default_factory=dict)
    values: dict[Loc, Pos] = field(default_factory=dict)

    def value_pos(self, loc: Loc) -> Pos:
        """Position of the value at ``loc``, or of its nearest located ancestor."""
        for n in range(len(loc), -1, -1):
            if loc[:n] in self.values:
                return self.values[loc[:n]]
        return Pos(1, 1)

    def key_pos(self, loc: Loc) -> Pos:
        """Position of the key at ``loc`` (falls back to the value's position)."""
        return self.keys.get(loc) or self.value_pos(loc)


def read_text(path: Path, rel: str) -> tuple[str | None, list[Problem]]:
    """Read a UTF-8 file, refusing huge, unreadable or badly encoded files with a positioned problem."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return None, [error(rel, 0, 0, "file-too-large", f"file is {size:,} bytes; the limit is {MAX_BYTES:,}")]
        raw = path.read_bytes()
    except OSError as exc:
        return None, [error(rel, 0, 0, "file-unreadable", f"cannot read file: {exc.strerror or exc}")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = len(before) - (before.rfind(b"\n") + 1) + 1
        return None, [
            error(
                rel,
                line,
                col,
                "file-encoding",
                f"byte 0x{raw[exc.start]:02x} is not valid UTF-8; save the file as UTF-8",
            )
        ]
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        return None, [error(rel, line, 1, "file-encoding", "file contains NUL bytes; it is not a text file")]
    return text, []


def _mark_pos(mark: yaml.Mark | None) -> Pos:
    return Pos(mark.line + 1, mark.column + 1) if mark is not None else Pos(1, 1)


class _Loader(yaml.SafeLoader):
    """A safe loader that remembers where each alias is used (aliases are refused: they hide repetition)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.alias_marks: list[yaml.Mark] = []

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.alias_marks.append(self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        return super().compose_node(parent, index)


class _Walker:
    """Checks a composed YAML tree (duplicate keys, aliases) and records where every path lives."""

    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.problems: list[Problem] = []
        self.keys: dict[Loc, Pos] = {}
        self.values: dict[Loc, Pos] = {}

    def walk(self, node: yaml.Node, loc: Loc) -> None:
        self.values[loc] = _mark_pos(node.start_mark)
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, Pos] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    p = _mark_pos(key_node.start_mark)
                    self.problems.append(
                        error(self.rel, p.line, p.col, "yaml-key", "mapping keys must be plain strings")
                    )
                    continue
                if key_node.tag == "tag:yaml.org,2002:merge":
                    p = _mark_pos(key_node.start_mark)
                    self.problems.append(
                        error(self.rel, p.line, p.col, "yaml-alias", "YAML merge keys are not allowed")
                    )
                    continue
                key = key_node.value
                kpos = _mark_pos(key_node.start_mark)
                if key in first:
                    prev = first[key]
                    self.problems.append(
                        error(
                            self.rel,
                            kpos.line,
                            kpos.col,
                            "yaml-duplicate-key",
                            f"duplicate key {key!r} (first defined at line {prev.line}); YAML would keep only the last",
                        )
                    )
                    continue
                first[key] = kpos
                self.keys[(*loc, key)] = kpos
                self.walk(value_node, (*loc, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.walk(item, (*loc, i))


def _yaml_problem(rel: str, exc: yaml.YAMLError) -> Problem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    pos = _mark_pos(mark)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    if "'\\t'" in problem or "\\t" in problem:
        return error(rel, pos.line, pos.col, "yaml-tab", "tab character where YAML needs spaces; indent with spaces")
    message = f"{context}, {problem}" if context else problem
    return error(rel, pos.line, pos.col, "yaml-syntax", f"invalid YAML: {message}")


def _reader_problem(text: str, rel: str, exc: yaml.reader.ReaderError) -> Problem:
    before = text[: exc.position]
    line = before.count("\n") + 1
    col = exc.position - (before.rfind("\n") + 1) + 1
    char = exc.character if isinstance(exc.character, str) else chr(exc.character)
    return error(rel, line, col, "yaml-character", f"character U+{ord(char):04X} is not allowed in YAML")


def _distinct_nodes(node: yaml.Node) -> bool:
    """Whether no node appears twice in the tree (libyaml's composer makes an alias the anchored node itself)."""
    seen: set[int] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            return False
        seen.add(id(n))
        if isinstance(n, yaml.MappingNode):
            todo.extend(part for pair in n.value for part in pair)
        elif isinstance(n, yaml.SequenceNode):
            todo.extend(n.value)
    return True


def _load_fast(text: str, rel: str) -> Located | None:
    """The common case through libyaml: a document that parses, is a mapping, and has no alias, no duplicate or
    merge key, no tab and no character YAML refuses. The result is the same as the pure-Python path's (same
    composer rules, constructor and resolver; ``tests/test_sources_fast.py`` compares them), about ten times
    sooner. Anything else returns None, and the pure-Python path reads the document again and says what is wrong
    with it, so every problem keeps its message and position."""
    if not yaml.__with_libyaml__ or "\t" in text or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return None
    loader = yaml.CSafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
            if not isinstance(node, yaml.MappingNode) or not _distinct_nodes(node):
                return None
            walker = _Walker(rel)
            walker.walk(node, ())
            if walker.problems:
                return None
            data = loader.construct_document(node)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError):
            return None
    finally:
        loader.dispose()
    return Located(data, walker.keys, walker.values)


def load_yaml(text: str, rel: str) -> tuple[Located | None, list[Problem]]:
    """Parse one YAML document into a mapping with positions; every failure is a positioned problem."""
    if not text.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        return None, [error(rel, 1, 1, "file-empty", "file is empty; expected a mapping of fields")]
    fast = _load_fast(text, rel)
    if fast is not None:
        return fast, []
    return _load_slow(text, rel)


def _load_slow(text: str, rel: str) -> tuple[Located | None, list[Problem]]:
    """PyYAML's pure-Python parser, which records where aliases are used and explains every failure."""
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        return None, [_reader_problem(text, rel, exc)]
    try:
        try:
            node = loader.get_single_node()
        except yaml.reader.ReaderError as exc:
            return None, [_reader_problem(text, rel, exc)]
        except yaml.YAMLError as exc:
            return None, [_yaml_problem(rel, exc)]
        if loader.alias_marks:
            return None, [
                error(rel, p.line, p.col, "yaml-alias", "YAML aliases are not allowed; write the value out")
                for p in map(_mark_pos, loader.alias_marks)
            ]
        if node is None:
            return None, [error(rel, 1, 1, "file-empty", "file is empty; expected a mapping of fields")]
        if not isinstance(node, yaml.MappingNode):
            p = _mark_pos(node.start_mark)
            kind = "a list" if isinstance(node, yaml.SequenceNode) else "a single value"
            return None, [error(rel, p.line, p.col, "yaml-not-mapping", f"expected a mapping of fields, found {kind}")]
        walker = _Walker(rel)
        walker.walk(node, ())
        if walker.problems:
            return None, walker.problems
        try:
            data = loader.construct_document(node)
        except yaml.YAMLError as exc:
            return None, [_yaml_problem(rel, exc)]
        except (ValueError, TypeError, OverflowError) as exc:
            return None, [error(rel, 1, 1, "yaml-syntax", f"invalid YAML value: {exc}")]
    finally:
        loader.dispose()
    return Located(data, walker.keys, walker.values), []


_CODES = {
    "missing": "field-missing",
    "extra_forbidden": "field-unknown",
    "literal_error": "field-value",
    "enum": "field-value",
    "greater_than_equal": "field-range",
    "less_than_equal": "field-range",
    "greater_than": "field-range",
    "less_than": "field-range",
    "too_short": "field-length",
    "too_long": "field-length",
    "string_too_long": "field-length",
    "string_too_short": "field-length",
}


def _code_for(err_type: str) -> str:
    if err_type in _CODES:
        return _CODES[err_type]
    if err_type.endswith("_type") or err_type.endswith("_parsing") or err_type in {"model_attributes_type"}:
        return "field-type"
    if "-" in err_type:  # our own PydanticCustomError codes are kebab-case already
        return err_type
    return "field-value"


def _loc_text(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


def validation_problems(
    exc: ValidationError,
    located: Located,
    rel: str,
    loc_prefix: Loc = (),
    untag: Callable[[Loc], Loc] | None = None,
) -> list[Problem]:
    """Map every pydantic error to a problem at the line:col of the offending key or value.

    ``untag`` drops what pydantic adds to a location that the YAML does not have (a tagged union's tag).
    """
    problems = []
    for err in exc.errors(include_url=False):
        loc: Loc = (*loc_prefix, *err["loc"])
        loc = untag(loc) if untag else loc
        etype = err["type"]
        code = _code_for(etype)
        where = _loc_text(loc)
        if etype == "extra_forbidden" and loc and str(loc[-1]) in RETIRED_FIELDS:
            pos = located.key_pos(loc)
            code, msg = RETIRED_FIELDS[str(loc[-1])]
        elif etype == "extra_forbidden":
            pos = located.key_pos(loc)
            msg = f"unknown field {where!r}"
        elif etype == "missing":
            pos = located.value_pos(loc[:-1])
            msg = f"missing required field {where!r}"
        else:
            pos = located.value_pos(loc)
            got = err.get("input")
            shown = repr(got) if isinstance(got, (str, int, float, bool)) or got is None else type(got).__name__
            msg = f"{where}: {err['msg']}" + (f" (got {shown})" if etype.endswith("_type") else "")
        problems.append(error(rel, pos.line, pos.col, code, msg))
    return problems


def load_model(
    path: Path, rel: str, model: type[M], untag: Callable[[Loc], Loc] | None = None
) -> tuple[M | None, Located | None, list[Problem]]:
    """Read, parse and validate one YAML file into ``model``; every problem at the line:col of its key or value."""
    text, problems = read_text(path, rel)
    if text is None:
        return None, None, problems
    located, problems = load_yaml(text, rel)
    if located is None:
        return None, None, problems
    try:
        return model.model_validate(located.data), located, []
    except ValidationError as exc:
        return None, located, validation_problems(exc, located, rel, untag=untag)
