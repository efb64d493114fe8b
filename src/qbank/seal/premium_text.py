"""Premium text as the sources hold it, and the free texts that must never repeat it.

The leak scan and the ``premium-duplicated`` check both fingerprint premium text from the *sources*:
each ``/// premium`` block of ``answers/*.md`` and each premium question's executed derivation (and
kernel checks), never from rendered HTML. Markdown is reduced to the words a reader sees (link URLs,
fence info strings, attribute lists, claim markers, tags and emphasis marks removed; entities decoded),
so a source run matches the rendered text. A fingerprint is every run of ``K`` words that is
*distinctive*: not digits only, not the section's own (public) heading, and not boilerplate, which is
a run *inside code* that at least ``BOILERPLATE_SCRIPTS`` premium derivations share (imports, API
calls). No free text exempts a run: a free part that repeats one is an error at ``qbank check``.
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..answers import Answer, FreeText
from ..corpus import Corpus
from ..memo import Stamp, file_stamp
from ..model import PUBLIC_TEXT_FIELDS

K = 6
MEMO_TEXTS = 1 << 14
"""Texts whose words and runs stay memoized (``qbank serve`` re-checks every text on each save)."""
MIN_WORDS = 12
"""A repeat is this many consecutive words of one premium text (two shingles' worth): technical prose shares
shorter runs ("Llama 3.1 70B on an 8-GPU H100 node"), measured on the real corpus: 40 runs of 6 to 10 words."""
BOILERPLATE_QUESTIONS = 2
WORD_RE = re.compile(r"\w+")
MARKER_RE = re.compile(r"\{[=!?][^{}\n]*\}")
FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
ATTR_LIST_RE = re.compile(r"\{:[^{}\n]*\}")
LINK_URL_RE = re.compile(r"\]\([^)\n]*\)")
REF_DEF_RE = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*\S.*$")
TAG_RE = re.compile(r"<[^>\n]*>")
EMPHASIS_RE = re.compile(r"(?<!\w)_+|_+(?!\w)")
ADMONITION_RE = re.compile(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]*\w+")


@dataclass(frozen=True)
class Run:
    """One run of ``K`` words and where it starts."""

    words: tuple[str, ...]
    line: int
    code: bool


@dataclass(frozen=True)
class Source:
    """One piece of text from the sources: where it is, what it is, and its words by line."""

    path: str
    line: int
    slug: str
    what: str
    """'premium section N', 'premium derivation', 'free answer', 'free derivation', 'question field'."""
    heading: str
    text: str

    def runs(self) -> tuple[Run, ...]:
        """Every run of ``K`` consecutive words, each with the file line of its first word."""
        return _runs(self.text, self.line)


@functools.lru_cache(maxsize=MEMO_TEXTS)
def _runs(text: str, line: int) -> tuple[Run, ...]:
    ws = located_words(text, line)
    return tuple(
        Run(tuple(w for w, _, _ in ws[i : i + K]), ws[i][1], all(c for _, _, c in ws[i : i + K]))
        for i in range(len(ws) - K + 1)
    )


@functools.lru_cache(maxsize=MEMO_TEXTS)
def located_words(markdown: str, first_line: int = 1) -> tuple[tuple[str, int, bool], ...]:
    """The reader-visible words of Markdown, lower-cased, each with its line and whether it is code.

    Memoized by text (a tuple, never changed by callers): ``qbank serve`` checks the whole bank on every
    save, and all but the saved file's texts are the same as last time."""
    out: list[tuple[str, int, bool]] = []
    fence: str | None = None
    for n, line in enumerate(markdown.split("\n"), start=first_line):
        m = FENCE_RE.match(line)
        if m and (fence is None or m.group(1)[0] == fence[0]):
            fence = m.group(1) if fence is None else None
            continue  # the fence and its info string are Markdown only
        code = fence is not None or line.startswith(("    ", "\t"))
        if not code:
            line = ADMONITION_RE.sub("", REF_DEF_RE.sub("", line))
            line = EMPHASIS_RE.sub(" ", TAG_RE.sub(" ", LINK_URL_RE.sub("]", ATTR_LIST_RE.sub("", line))))
        line = html.unescape(MARKER_RE.sub("", line))
        out += [(w, n, code) for w in WORD_RE.findall(line.lower())]
    return tuple(out)


def words(text: str) -> list[str]:
    """Lower-cased words of a plain text (a built file's view)."""
    return WORD_RE.findall(text.lower())


def distinctive(ws: Iterable[str]) -> bool:
    """Whether a run of words can tell its section apart: not digits only."""
    # runs such as `1 2 3 4 5 6` (a derivation's printed tables) also turn up in minified scripts
    return any(not w.isdigit() for w in ws)


def _derivation_text(corpus: Corpus, slug: str) -> tuple[str, str] | None:
    """A question's derivation as the page shows it (Markdown, then kernel checks) and its path."""
    from ..render.derivation import latest

    d = latest(corpus.root, slug)
    if d is None:
        return None
    parts = [d.markdown or ""]
    parts += [f"{k.name} {k.device} {k.ran_at} {k.outcome}" for k in d.kernels]
    return "\n".join(parts), f".qbank/derivations/{slug}.md"


def premium_sources(corpus: Corpus) -> list[Source]:
    """Every premium text: the premium blocks of the answers and the premium questions' derivations."""
    out: list[Source] = []
    for slug in sorted(corpus.answers):
        answer = corpus.answers[slug]
        for n, sec in enumerate(answer.premium, start=1):
            # the block's body starts on the line after '/// premium'
            out.append(Source(answer.path, sec.line + 1, slug, f"premium section {n}", sec.heading, sec.markdown))
    for slug in sorted(corpus.questions):
        if corpus.questions[slug].access == "premium":
            found = _derivation_text(corpus, slug)
            if found:
                out.append(Source(found[1], 1, slug, "premium derivation", "Executed derivation", found[0]))
    return out


def free_sources(corpus: Corpus) -> Iterator[Source]:
    """Every free text contributors write: free answer parts, other sections' headings, the questions' public
    fields and premium summaries, free derivations."""
    for slug in sorted(corpus.answers):
        yield from _answer_sources(corpus.answers[slug])
    for slug in sorted(corpus.questions):
        yield from _question_sources(corpus, slug)
        if corpus.questions[slug].access != "premium":
            found = _derivation_text(corpus, slug)
            if found:
                yield Source(found[1], 1, slug, "free derivation", "", found[0])


@functools.lru_cache(maxsize=MEMO_TEXTS)
def _answer_sources(answer: Answer) -> tuple[Source, ...]:
    """An answer's free parts and premium headings (kept by the answer's value: `qbank serve` asks every save)."""
    out: list[Source] = []
    lines = answer.text.split("\n")
    for part in answer.parts:
        if isinstance(part, FreeText):
            # FreeText.markdown is stripped: find its first line in the file for positions
            first = part.markdown.split("\n", 1)[0]
            start = next((i for i in range(part.line - 1, len(lines)) if lines[i] == first), part.line - 1) + 1
            out.append(Source(answer.path, start, answer.slug, "free answer", "", part.markdown))
        else:
            # a premium heading is public (the locked placeholder shows it)
            out.append(Source(answer.path, part.line + 1, answer.slug, "premium heading", "", part.heading))
    return tuple(out)


_QUESTION_SOURCES: dict[str, tuple[object, object, tuple[Source, ...]]] = {}
"""A question's public fields as sources, by its path, with the parsed question and positions they came from
(the same objects while the file's stamp is unchanged, see ``qbank.memo``)."""


def _question_sources(corpus: Corpus, slug: str) -> tuple[Source, ...]:
    qrel = corpus.question_path(slug)
    question, located_q = corpus.questions[slug], corpus.positions.get(qrel)
    kept = _QUESTION_SOURCES.get(qrel)
    if kept is not None and kept[0] is question and kept[1] is located_q:
        return kept[2]
    out: list[Source] = []
    for name in PUBLIC_TEXT_FIELDS:
        # the h1, the <title>, the meta description and the list teaser: every page that lists it shows it
        text = getattr(question, name)
        if text:
            line = located_q.value_pos((name,)).line if located_q else 1
            out.append(Source(qrel, line, slug, f"question {name}", "", text))
    for i, summary in enumerate(question.premium_summaries):
        # public: the locked section shows it, search indexes it
        line = located_q.value_pos(("premium_summaries", i)).line if located_q else 1
        out.append(Source(qrel, line, slug, "premium summary", "", summary))
    _QUESTION_SOURCES[qrel] = (question, located_q, tuple(out))
    return tuple(out)


@dataclass
class PremiumPrints:
    """The distinctive runs of every premium source, each mapped to the first source that has it."""

    long: dict[tuple[str, ...], Source] = field(default_factory=dict)
    short: list[tuple[str, Source]] = field(default_factory=list)
    length: dict[int, int] = field(default_factory=dict)
    """Words of each source (by ``id``): a source shorter than ``MIN_WORDS`` is a repeat when it is all there."""
    compared: dict[Source, Duplicate | None] = field(default_factory=dict)
    """Free texts already compared with these fingerprints, and their first repeat (:func:`duplicates`)."""

    @classmethod
    def of(cls, sources: Iterable[Source], shared: dict[str, set[tuple[str, ...]]] | None = None) -> PremiumPrints:
        """Fingerprints of the premium sources; ``shared``: per slug, runs of a premium script's source that
        another committed file shows (see :func:`shared_code`), left out of that slug's derivation."""
        srcs = list(sources)
        shared = shared or {}
        runs = {id(s): s.runs() for s in srcs}
        # runs that premium texts of several questions share are boilerplate (imports, API calls,
        # "Llama 3.1 70B in BF16"): common phrasing, no one section's text
        used_by: dict[tuple[str, ...], set[str]] = {}
        for s in srcs:
            for r in runs[id(s)]:
                used_by.setdefault(r.words, set()).add(s.slug)
        boiler = {w for w, slugs in used_by.items() if len(slugs) >= BOILERPLATE_QUESTIONS}
        prints = cls()
        for s in srcs:
            heading = tuple(words(s.heading))
            head_runs = {heading[i : i + K] for i in range(len(heading) - K + 1)}
            ws = [w for w, _, _ in located_words(s.text)]
            if heading and tuple(ws[: len(heading)]) == heading:
                ws = ws[len(heading) :]
            prints.length[id(s)] = len(ws)
            if len(ws) < K:
                needle = " " + " ".join(ws) + " "
                if len(needle) - 2 >= 12 and tuple(ws) != heading and distinctive(ws):
                    prints.short.append((needle, s))
                continue
            for r in runs[id(s)]:
                if s.what == "premium derivation" and r.words in shared.get(s.slug, ()):
                    continue
                if r.words not in boiler and r.words not in head_runs and distinctive(r.words):
                    prints.long.setdefault(r.words, s)
        return prints


@functools.lru_cache(maxsize=MEMO_TEXTS)
def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Every run of ``K`` consecutive words of a text, positions dropped (memoized by text, like its words)."""
    ws = [w for w, _, _ in located_words(text)]
    return frozenset(tuple(ws[i : i + K]) for i in range(len(ws) - K + 1))


def shared_code(corpus: Corpus) -> dict[str, set[tuple[str, ...]]]:
    """Per premium question, the runs of its script's committed source that another committed file shows.

    The source of ``verify/<slug>.py`` is repository code every contributor reads: where another script or
    a free answer part shows the same run (the kernel a free answer prints and its script verifies, a helper
    two scripts share, a docstring restating the free answer), it is not premium text. What a script
    *prints* is never exempt, nor is any premium answer section: a script that reads premium text at run
    time and prints it does not hold it in its source.
    """
    return _shared(corpus)[0]


def _shared(corpus: Corpus) -> tuple[dict[str, set[tuple[str, ...]]], tuple[tuple[str, frozenset[Any]], ...]]:
    """:func:`shared_code`, and the same frozen as :func:`premium_prints` keys its fingerprints by."""
    scripts: dict[str, frozenset[tuple[str, ...]]] = {}
    for slug, path in corpus.verify_scripts.items():
        runs = _script_shingles(path)
        if runs is not None:
            scripts[slug] = runs
    free_texts = tuple(p.markdown for a in corpus.answers.values() for p in a.parts if isinstance(p, FreeText))
    premium = tuple(slug for slug, q in corpus.questions.items() if q.access == "premium")
    key = (tuple(scripts.items()), free_texts, premium)
    if not _SHARED or _SHARED[0] != key:  # equal inputs are mostly the very same objects: a cheap comparison
        out = _shared_runs(scripts, free_texts, premium)
        _SHARED[:] = [key, out, tuple(sorted((slug, frozenset(runs)) for slug, runs in out.items()))]
    return _SHARED[1], _SHARED[2]


_SHARED: list[Any] = []
"""The last inputs of :func:`shared_code`, its result and that result frozen (kept for `qbank serve`, which checks
on every save; never changed by callers)."""
_SCRIPTS: dict[Path, tuple[Stamp | None, frozenset[tuple[str, ...]] | None]] = {}


def _script_shingles(path: Path) -> frozenset[tuple[str, ...]] | None:
    """The runs of a script's source (None when unreadable), kept while its (mtime ns, size, inode) are unchanged."""
    stamp = file_stamp(str(path))
    kept = _SCRIPTS.get(path)
    if stamp is not None and kept is not None and kept[0] == stamp:
        return kept[1]
    try:
        runs: frozenset[tuple[str, ...]] | None = shingles(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        runs = None
    _SCRIPTS[path] = (stamp, runs)
    return runs


def _shared_runs(
    scripts: dict[str, frozenset[tuple[str, ...]]], free_texts: tuple[str, ...], premium: tuple[str, ...]
) -> dict[str, set[tuple[str, ...]]]:
    free: set[tuple[str, ...]] = set()
    for text in free_texts:
        free |= shingles(text)
    # how many scripts show each run: one of a script's runs is in another script when two or more show it
    # (counted once, not a union of all the other scripts per question: that was quadratic in the bank)
    in_scripts = Counter(r for rs in scripts.values() for r in rs)
    out: dict[str, set[tuple[str, ...]]] = {}
    for slug in premium:
        if slug in scripts:
            out[slug] = {r for r in scripts[slug] if in_scripts[r] > 1 or r in free}
    return out


def premium_prints(corpus: Corpus) -> PremiumPrints:
    """The fingerprints of every premium text of the corpus.

    Kept by their inputs (every premium source and the shared runs): a save that changes no premium text
    (most saves in `qbank serve`) reuses the last fingerprints, and with them the free texts already compared.
    """
    return _prints(tuple(premium_sources(corpus)), _shared(corpus)[1])


@functools.lru_cache(maxsize=2)
def _prints(sources: tuple[Source, ...], shared: tuple[tuple[str, frozenset[tuple[str, ...]]], ...]) -> PremiumPrints:
    return PremiumPrints.of(sources, {slug: set(runs) for slug, runs in shared})


def repeats(ws: list[str], prints: PremiumPrints, min_words: int = MIN_WORDS) -> Iterator[tuple[int, Source, int]]:
    """Where a word list repeats premium text: (first word index, owner, words matched), for every run of
    consecutive fingerprints of one premium source at least ``min_words`` words long."""
    i, n = 0, len(ws) - K + 1
    while i < n:
        owner = prints.long.get(tuple(ws[i : i + K]))
        if owner is None:
            i += 1
            continue
        j = i
        while j + 1 < n and prints.long.get(tuple(ws[j + 1 : j + 1 + K])) is owner:
            j += 1
        if j - i + K >= min(min_words, prints.length.get(id(owner), min_words)):
            yield i, owner, j - i + K
        i = j + 1


@dataclass(frozen=True)
class Duplicate:
    """A free text that repeats a premium run: where, and whose premium text it is."""

    path: str
    line: int
    what: str
    premium: Source
    run: tuple[str, ...]


def duplicates(corpus: Corpus) -> list[Duplicate]:
    """Every free text that repeats premium text (the first repeat of each free source)."""
    prints = premium_prints(corpus)
    found: list[Duplicate] = []
    for free in free_sources(corpus):
        if free not in prints.compared:
            prints.compared[free] = first_repeat(free, prints)
        duplicate = prints.compared[free]
        if duplicate is not None:
            found.append(duplicate)
    return found


def first_repeat(free: Source, prints: PremiumPrints) -> Duplicate | None:
    """The first place where one free text repeats premium text, if any."""
    located = located_words(free.text, free.line)
    ws = [w for w, _, _ in located]
    for i, owner, n in repeats(ws, prints):
        if free.what == "premium heading" and owner.slug == free.slug:
            continue  # a section's own heading opens its body
        return Duplicate(free.path, located[i][1], free.what, owner, tuple(ws[i : i + n]))
    joined = " " + " ".join(ws) + " "
    for needle, owner in prints.short:
        if needle in joined and not (free.what == "premium heading" and owner.slug == free.slug):
            return Duplicate(free.path, free.line, free.what, owner, tuple(needle.split()))
    return None


def root_relative(root: Path, path: str) -> str:
    """A source path as problems show it (already repository-relative)."""
    return path
