"""The leak scan: no premium fragment's text may appear in any file of the built site.

Each premium section becomes a set of word shingles (every run of ``K`` consecutive words, case and
punctuation folded), so a leak is found even when it is partial, re-wrapped, entity-escaped, JSON-
escaped, URL-encoded or cut into a meta description. Only distinctive shingles count: those that
also occur in the public *sources* (free answer text, question and catalog fields, the section's
own heading) are dropped, since technical prose repeats runs like "Llama 3.1 70B on an 8-GPU H100
node" between free and premium parts (measured on the real corpus: 21 false hits without this).
The public side is taken from the sources, not from the built pages, so a renderer that copies
premium text into a page cannot thereby make it "public". A section shorter than ``K`` words is
matched as a whole. Every file is scanned, gzip ones decompressed; ciphertext is base64 and cannot
match a run of words.
"""

from __future__ import annotations

import contextlib
import gzip
import html
import json
import re
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..corpus import Corpus
from .encrypt import PremiumFragment

K = 6
WORD_RE = re.compile(r"\w+")
TAG_RE = re.compile(r"<[^>]*>")
MARKER_RE = re.compile(r"\{[=!][^{}\n]*\}")
# a fence's info string (```python) is Markdown only: no reader sees it, so neither does a fragment's text
FENCE_RE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$", re.MULTILINE)
MIN_SHORT_CHARS = 12  # a premium section shorter than K words is still matched when it is this long


def words(text: str) -> list[str]:
    """Lower-cased words of a text."""
    return WORD_RE.findall(text.lower())


def shingles(ws: list[str], k: int = K) -> set[tuple[str, ...]]:
    """Every run of ``k`` consecutive words."""
    return {tuple(ws[i : i + k]) for i in range(len(ws) - k + 1)}


@dataclass(frozen=True)
class Leak:
    """One premium section found in one file."""

    file: str
    page_path: str
    section: str
    heading: str


@dataclass
class Fingerprints:
    """The shingles of every premium section, mapped back to the section."""

    long: dict[tuple[str, ...], PremiumFragment]
    short: list[tuple[str, PremiumFragment]]

    @property
    def starts(self) -> frozenset[str]:
        """First words of the shingles: a file's word only starts a candidate run when it is one."""
        return frozenset(s[0] for s in self.long)

    @classmethod
    def of(cls, fragments: Iterable[PremiumFragment], public: Iterable[str] = ()) -> Fingerprints:
        """Fingerprint the plaintext of each fragment, leaving out what the ``public`` texts also say."""
        public_words = [words(FENCE_RE.sub("", strip_markers(t))) for t in public]
        seen = set().union(*(shingles(ws) for ws in public_words)) if public_words else set()
        joined_public = " ".join(" " + " ".join(ws) + " " for ws in public_words)
        long: dict[tuple[str, ...], PremiumFragment] = {}
        short: list[tuple[str, PremiumFragment]] = []
        for f in fragments:
            ws = words(strip_markers(f.text))
            heading = words(f.heading)
            if heading and ws[: len(heading)] == heading:
                ws = ws[len(heading) :]  # the heading is on the placeholder; a run across it and the body is not
            if len(ws) >= K:
                for s in shingles(ws) - shingles(heading) - seen:
                    if distinctive(s):
                        long.setdefault(s, f)
            else:
                needle = " " + " ".join(ws) + " "
                if (
                    len(needle) - 2 >= MIN_SHORT_CHARS
                    and ws != heading
                    and distinctive(ws)
                    and needle not in joined_public
                ):
                    short.append((needle, f))
        return cls(long, short)


def distinctive(ws: Iterable[str]) -> bool:
    """Whether a run of words can tell its section apart: not digits only."""
    # runs such as `1 2 3 4 5 6` or `0 0 0 0 1 1` (a derivation's printed tables) also turn up in minified
    # scripts and stylesheets (measured on the real corpus: 5 false hits without this)
    return any(not w.isdigit() for w in ws)


def strip_markers(text: str) -> str:
    """Text without claim markers (``{=name}``, ``{!reason}``), which renderers strip too."""
    return MARKER_RE.sub("", text)


def public_texts(corpus: Corpus) -> Iterator[str]:
    """Everything the sources publish freely: free answer text, premium headings, free derivations, string fields."""
    from ..render.derivation import latest

    for answer in corpus.answers.values():
        yield answer.free_markdown
        # a premium section's heading is public: the locked placeholder shows it
        yield from (section.heading for section in answer.premium)
    for slug, question in corpus.questions.items():
        # a free question's derivation is public, so the boilerplate it shares with premium ones
        # (imports, API calls) is not premium text
        if question.access == "free":
            derivation = latest(corpus.root, slug)
            if derivation is not None and derivation.markdown:
                yield derivation.markdown
    for group in (corpus.questions, corpus.topics, corpus.companies, corpus.concepts):
        for item in group.values():
            yield from _json_strings(item.model_dump(mode="json"))


def _json_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


def views(raw: str, name: str) -> list[str]:
    """The readings of a file a leak could hide in: raw, tags stripped, entities, JSON, URL-encoding."""
    # entity-decoded whole text (body and attributes such as meta and Open Graph content), then the
    # same with tags removed (a phrase broken by <em> or by a line wrap in the markup)
    out = [html.unescape(raw), html.unescape(TAG_RE.sub(" ", raw))]
    if name.endswith(".json") or raw.lstrip().startswith(("{", "[")):
        try:
            text = " ".join(_json_strings(json.loads(raw)))
            out.append(html.unescape(TAG_RE.sub(" ", text)))
        except ValueError:
            pass
    if "%" in raw:
        out.append(urllib.parse.unquote_plus(raw))
    # JavaScript/JSON escapes inside HTML (a JSON-LD block, inline config): decode \uXXXX and \n
    if "\\u" in raw or "\\n" in raw:
        out.append(re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), raw).replace("\\n", " "))
    return out


def scan_text(raw: str, name: str, prints: Fingerprints, starts: frozenset[str] | None = None) -> list[PremiumFragment]:
    """The premium sections whose text occurs in one file's text."""
    found: dict[tuple[str, str], PremiumFragment] = {}
    starts = prints.starts if starts is None else starts
    for view in views(raw, name):
        ws = words(view)
        if prints.long:
            for i, w in enumerate(ws):
                if w in starts:
                    f = prints.long.get(tuple(ws[i : i + K]))
                    if f is not None:
                        found[(f.page_path, f.section)] = f
        if prints.short:
            joined = " " + " ".join(ws) + " "
            for needle, f in prints.short:
                if needle in joined:
                    found[(f.page_path, f.section)] = f
    return list(found.values())


def read_file(path: Path) -> str:
    """A file's bytes as text, gzip files decompressed."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError):  # not gzip after all: scan the bytes as they are
            data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def scan_site(site: Path, fragments: Iterable[PremiumFragment], public: Iterable[str] = ()) -> list[Leak]:
    """Every (file, section) pair where premium text (not also in ``public``) appears in the built site."""
    prints = Fingerprints.of(fragments, public)
    if not prints.long and not prints.short:
        return []
    leaks: list[Leak] = []
    starts = prints.starts
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        rel = path.relative_to(site).as_posix()
        for f in scan_text(read_file(path), rel, prints, starts):
            leaks.append(Leak(rel, f.page_path, f.section, f.heading))
    return leaks
