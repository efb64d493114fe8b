"""The quantity grammar: numbers in a run of text, each with its readings, relation and span.

A quantity is a number core (digits, exponent, power, or number words), then in order an optional
magnitude suffix (K, M, B, T, "million"), a unit (from :mod:`.lexicon`, glued, spaced or hyphenated,
or a count noun up to two words later: "8 KV heads"), and around it an optional comparative or
approximation ("over", "about", "≥", "or more"), a range ("85–90%", "between 4 and 8") or a ratio
("4:1", "1 in 8"). Spans that :mod:`.identifiers` claims are never read. ``RULES`` lists every rule
with the example it stands for; ``tests/claims/cases.yaml`` has sentences for each.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, replace

from .identifiers import identifier_spans
from .lexicon import (
    APPROXIMATIONS,
    ARTICLE_UNITS,
    BINARY_SUFFIXES,
    COUNT_DIMENSIONS,
    FACTOR_COMPARATIVES,
    MEASURE_DIMENSIONS,
    MODEL_NOUNS,
    OVER_AS_COMPARISON,
    POSTFIX_RELATIONS,
    RELATIONS,
    SCALE_AFTER,
    STOP_WORDS,
    SUFFIXES,
    UNIT_RE,
    UNIT_WORDS,
)
from .quantity import Found, Reading, readings, step_of, unit_info
from .words import (
    FRACTION_WORDS,
    MULTIPLE_WORDS,
    SCALE_WORDS,
    TENS_WORDS,
    UNITS_WORDS,
    fold_factor,
    parse_cardinal,
)

NUMBER_VOCAB = frozenset({*UNITS_WORDS, *TENS_WORDS, *SCALE_WORDS, *FRACTION_WORDS, *MULTIPLE_WORDS, "one"})
SINGULAR_COUNTS = frozenset(w for w, (sym, _m) in UNIT_WORDS.items() if sym in COUNT_DIMENSIONS and f"{w}s" == sym)
# a parallelism degree glued to its name is a count of GPUs (ranks): "TP8", "PP2", "EP-72" state 8, 2, 72 GPUs
PARALLEL_RE = re.compile(r"(?<![\w.])(?:TP|PP|EP|DP|CP)-?$")
# words that open a clause: a lone "one" + count noun after them is a generic subject ("each"), not a count
CLAUSE_OPENERS = frozenset({"so", "what", "that", "which", "where", "when", "if", "while", "because", "since", "and"})
HALVES_AS_NOUN = frozenset({"the", "two", "both", "in", "into", "its", "their", "of"})
PER_WORDS = frozenset({"once", "twice", "thrice", "times"})
DOZEN_RE = re.compile(r"\s+dozen\b")
SPREAD_OVER = frozenset({"GPUs", "nodes", "layers", "steps", "requests", "experts", "blocks", "heads"})

RULES: dict[str, str] = {
    "digits": "320, 327,680, 0.34",
    "exponent": "1e9, 3.2e-4",
    "power": "2^20, 10^6, 2²⁰",
    "times-ten": "3.2 × 10^9, 2.48×10−5",
    "times-power": "8x2^10 bits, 3 · 2^20",
    "binary-suffix": "64 Ki entries, 1 Mi tokens",
    "signed": "-5%, −0.3",
    "parallel-degree": "TP8, PP2, EP-72 (a count of GPUs)",
    "suffix": "2K, 128k, 1M, 70B model, 1.5B tokens",
    "scale-word": "1.8 trillion parameters",
    "unit": "320 GiB, 3.35 TB/s, 5 ms, 92%, 8-bit, 2K-token",
    "count-noun": "8 GPUs, 8 KV heads, top-8 experts, 8×H100",
    "factor": "1.8×, 4x faster, 3 times more",
    "words": "eight, seventy-two, a hundred, one percent",
    "fraction-words": "half, a third, two thirds",
    "multiple-words": "twice, doubles, tenfold",
    "range": "85–90%, 4-8 GPUs, between 4 and 8",
    "ratio": "4:1, 1 in 8, one in eight, 3/4 of",
    "relation": "over 90%, under one percent, at least 2, up to 8, ≥ 4, 90% or more",
    "approximation": "about 300, roughly 2×, ~40 GB, ≈ 1 ms, on the order of 1 ms",
}


CORE_RE = re.compile(
    r"(?<![\w.])(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d{1,3}(?:[\u2009\u202f]\d{3})+(?!\d)|\d+)(?:\.(?P<frac>\d+))?"
    r"(?:[eE](?P<exp>[+\-−]?\d+)(?![\w])|\^\{?(?P<pow>[\-−]?\d+)\}?|(?P<sup>[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
)
GLUED_CORE_RE = re.compile(CORE_RE.pattern.removeprefix(r"(?<![\w.])"))
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻−", "0123456789--")
# "× 10^9", "×10⁻⁵", "×10−5" (a Unicode minus: 10 to the -5), and any base: "8x2^10", "3 · 2^20"
TIMES_TEN_RE = re.compile(
    r"\s*[×x·]\s*(?P<base>\d+)(?:\^\{?(?P<pow>[\-−]?\d+)\}?|(?P<sup>[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)|(?<=10)(?P<neg>−\d+)(?![\d.]))"
)
# a sign glued to a number ("-5%", "−0.3 dB"), after a space, an opening bracket or an operator
SIGN_BEFORE = "-−"
SIGN_CONTEXT = " \t\n([=≈~:,/"
BINARY_SUFFIX_RE = re.compile(r"[ \u00a0]?(?P<w>Ki|Mi|Gi|Ti)(?![A-Za-z])")
WORD_RE = re.compile(r"(?<![\w-])[A-Za-z]+(?:-[A-Za-z]+)*")
GPU_NAME_RE = re.compile(r"\s?[×x]\s?(?=[A-Z]{1,3}\d{2,4}[A-Za-z]*\b)")
FACTOR_RE = re.compile(r"\s?[×x](?![\w])(?!\s*[\d(])")
TIMES_RE = re.compile(r"\s+times\b")
SCALE_AFTER_RE = re.compile(r"\s+(?P<w>thousand|million|billion|trillion)\b")
RANGE_DASH_RE = re.compile(r"\s*[–—]\s*|-(?=\d)")
RATIO_RE = re.compile(r":(?=\d)")
IN_RE = re.compile(r"\s+(?:in|out of)\s+(?:every\s+)?")
SLASH_RE = re.compile(r"/(?=\d)")
UNREAD_TRIM = "()[]{}<>,.;:!?'\"*_`“”‘’"


def _alt(items: tuple[tuple[str, str], ...], tail: str) -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(rf"(?:^|(?<=[\s(\[]))(?:{a}){tail}$", re.IGNORECASE), k) for a, k in items]


RELATION_BEFORE = _alt(RELATIONS, r"\s*")
APPROX_BEFORE = _alt(APPROXIMATIONS, r"\s*")
POSTFIX = [(re.compile(a), k) for a, k in POSTFIX_RELATIONS]


@dataclass
class _Core:
    """A number core before its unit is known."""

    start: int
    end: int
    mantissa: float
    step: float
    mults: tuple[float, ...]
    rule: str
    weak: bool = False


class Scanner:
    """Finds quantities in one text; blocked spans come from the identifier rules."""

    def __init__(self, text: str, *, math_mode: bool = False, unit_hint: str | None = None) -> None:
        self.text = text
        self.math = math_mode
        self.unit_hint = unit_hint
        self.blocked = [(s, e) for s, e, _ in identifier_spans(text)]
        self.structure: list[tuple[int, int]] = []
        """Spans read as structure by a named rule (0 and 1 in a formula): accounted for, not claims."""

    def is_blocked(self, i: int) -> bool:
        """True when position ``i`` lies inside an identifier."""
        return any(s <= i < e for s, e in self.blocked)

    # -- cores ----------------------------------------------------------------------------------------
    def digit_core(self, i: int) -> _Core | None:
        """A digit number starting exactly at ``i``."""
        m = CORE_RE.match(self.text, i)
        if m is None and PARALLEL_RE.search(self.text, 0, i):
            m = GLUED_CORE_RE.match(self.text, i)
        if m is None or self.is_blocked(i):
            return None
        int_part, frac = m.group("int"), m.group("frac")
        int_part = re.sub(r"[\u2009\u202f]", ",", int_part)  # "10\u202f000": SI thin-space thousands
        mantissa = float(int_part.replace(",", "") + ("." + frac if frac else ""))
        step = step_of(int_part, frac)
        rule = "digits"
        mult = 1.0
        if m.group("exp"):
            mult, rule = 10.0 ** int(m.group("exp").translate(SUPERSCRIPT)), "exponent"
        elif (m.group("pow") or m.group("sup")) and frac:
            # a decimal base ("0.8^5"): the base and the exponent are two numbers, each checked
            return _Core(i, m.start("frac") + len(frac), mantissa, step, (mult,), rule)
        elif m.group("pow") or m.group("sup"):
            power = int((m.group("pow") or m.group("sup")).translate(SUPERSCRIPT))
            mantissa, step, rule = mantissa**power, 1.0, "power"
        end = m.end()
        t = TIMES_TEN_RE.match(self.text, end)
        if t and rule == "digits":
            power = int((t.group("pow") or t.group("sup") or t.group("neg")).translate(SUPERSCRIPT))
            base = int(t.group("base"))
            mult, rule, end = float(base) ** power, "times-ten" if base == 10 else "times-power", t.end()
        return _Core(i, end, mantissa, step, (mult,), rule)

    # -- units ----------------------------------------------------------------------------------------
    def unit_after(self, core: _Core) -> tuple[int, str | None, tuple[float, ...], str, str | None]:
        """(end, unit spelling, multipliers, rule, noun) of what follows a core."""
        text, end, mults, rule = self.text, core.end, core.mults, core.rule
        glued = re.match(r"[A-Za-z]+", text[end:])
        if glued:
            letter = text[end]
            after = text[end + 1 : end + 2]
            if letter in SUFFIXES and not after.isalpha():
                rest = end + 1
                if letter == "B":
                    unit_m = UNIT_RE.match(text, rest)
                    model = re.match(rf"[\s-]?{MODEL_NOUNS}", text[rest:])
                    before = text[: core.start].rstrip().lower()
                    count = unit_m and UNIT_WORDS[unit_m.group("unit")][0] in COUNT_DIMENSIONS
                    if unit_m and count and self.unit_ok(unit_m, core, tuple(m * 1e9 for m in mults)):
                        return unit_m.end(), unit_m.group("unit"), tuple(m * 1e9 for m in mults), "suffix", None
                    del model, before  # glued "B" is billions of parameters: "70B", "0.9B"; bytes are "2 B"
                    return rest, "params", tuple(m * 1e9 for m in mults), "model-size", None
                mults = tuple(m * s for m in mults for s in SUFFIXES[letter])
                end, rule = rest, "suffix"
            elif (binary := BINARY_SUFFIX_RE.match(text, end)) and rule == "digits":
                mults = tuple(m * BINARY_SUFFIXES[binary.group("w")] for m in mults)
                end, rule = binary.end(), "binary-suffix"
            else:
                unit_m = UNIT_RE.match(text, end)
                if unit_m and unit_m.group("sep") == "":
                    return unit_m.end(), unit_m.group("unit"), mults, "unit", None
                if self.math:
                    return end, None, mults, rule, None
                gpu = GPU_NAME_RE.match(text, end)
                if gpu:  # "8x A100", "8xH100": a count of GPUs, before the factor reading of 'x'
                    return gpu.end(), "GPUs", mults, "count-noun", None
                if text[end] in "x×" and FACTOR_RE.match(text, end):
                    return end + 1, "x", mults, "factor", None
                return -1, None, mults, rule, None  # digits glued to a word: an identifier ("3D", "4th")
        binary = BINARY_SUFFIX_RE.match(text, end)
        if binary and rule == "digits":
            mults = tuple(m * BINARY_SUFFIXES[binary.group("w")] for m in mults)
            end, rule = binary.end(), "binary-suffix"
        scale_m = SCALE_AFTER_RE.match(text, end)
        if scale_m and rule == "digits":
            mults = tuple(m * SCALE_AFTER[scale_m.group("w")] for m in mults)
            end, rule = scale_m.end(), "scale-word"
        unit_m = UNIT_RE.match(text, end)
        if unit_m and self.unit_ok(unit_m, core, mults):
            return unit_m.end(), unit_m.group("unit"), mults, "unit" if rule == "digits" else rule, None
        gpu = GPU_NAME_RE.match(text, end)
        if gpu and not self.math:
            return gpu.end(), "GPUs", mults, "count-noun", None
        if FACTOR_RE.match(text, end) and (not self.math or "×" in text[end : end + 2]):
            return FACTOR_RE.match(text, end).end(), "x", mults, "factor", None  # type: ignore[union-attr]
        times = TIMES_RE.match(text, end)
        if times and FACTOR_COMPARATIVES.match(text, times.end()):
            return times.end(), "x", mults, "factor", None
        # a count unit a word or two later: "8 KV heads", "256 routed experts"
        pos = end
        for _ in range(2):
            w = re.match(r"\s+([\w.+/-]+)", text[pos:])
            if not w or w.group(1).lower() in STOP_WORDS or w.group(1)[0].isdigit():
                break
            pos += w.end()
            unit_m = UNIT_RE.match(text, pos)
            if unit_m and unit_m.group("sep").strip() == "" and UNIT_WORDS[unit_m.group("unit")][0] in COUNT_DIMENSIONS:
                return unit_m.end(), unit_m.group("unit"), mults, "count-noun", None
        noun_m = re.match(r"[\s-]([A-Za-z][\w-]*)", text[end:])
        noun = noun_m.group(1) if noun_m and noun_m.group(1).lower() not in STOP_WORDS else None
        if self.unit_hint is not None and rule in {"digits", "suffix", "exponent", "power", "times-ten", "times-power"}:
            return end, self.unit_hint, mults, rule, noun
        return end, None, mults, rule, noun

    def unit_ok(self, m: re.Match[str], core: _Core, mults: tuple[float, ...]) -> bool:
        """Whether a unit match after a number really is its unit."""
        unit = m.group("unit")
        if self.math and len(unit) == 1 and unit != "%" and "\u00a0" not in m.group("sep"):
            return False  # "$448\,s$", "$1-h$": in a formula a lone letter is a variable (\text{s} is a unit)
        singular = unit in SINGULAR_COUNTS and "-" not in m.group("sep")
        # "the 1M request" names a request, it does not count requests
        return not (singular and core.mantissa * mults[0] != 1)

    # -- modifiers ------------------------------------------------------------------------------------
    def modifiers(self, start: int) -> tuple[str | None, str | None]:
        """(relation, approximation) written right before ``start``."""
        before = self.text[max(0, start - 40) : start]
        for pattern, rel in RELATION_BEFORE:
            m = pattern.search(before)
            if m:
                word = m.group(0).strip().lower()
                if word == "over":
                    prev = before[: m.start()].rstrip().split()
                    # a clause inside a sentence ("(over 2 TB", ": over 2 TB") compares; a sentence
                    # opening "Over 64 rows, ..." is the preposition (unless a percentage follows)
                    sentence_start = not prev or prev[-1][-1] in ".!?"
                    clause_start = bool(prev) and prev[-1][-1] in "(:;" and not sentence_start
                    percent = re.match(r"\s*[\d.,]+\s*(?:%|percent)", self.text[start:])
                    if not (clause_start or percent or (prev and prev[-1].lower() in OVER_AS_COMPARISON)):
                        break
                return rel, None
        for pattern, kind in APPROX_BEFORE:
            if pattern.search(before):
                return None, kind
        return None, None

    def postfix(self, end: int) -> tuple[int, str | None]:
        """A relation written after a quantity ('90% or more', '1M+')."""
        for pattern, rel in POSTFIX:
            m = pattern.match(self.text, end)
            if m:
                return m.end(), rel
        return end, None

    # -- one quantity ---------------------------------------------------------------------------------
    def quantity_at(self, core: _Core) -> Found | None:
        """The full quantity around a digit core, or None when it is part of an identifier."""
        if core.rule == "digits" and PARALLEL_RE.search(self.text, 0, core.start):
            # "TP8 × PP2": a degree counts the GPUs (ranks) of a layout; no unit or factor follows it
            lo = readings(core.mantissa, core.step, core.mults, "GPUs")
            return Found(core.start, core.end, core.start, "parallel-degree", lo, num_end=core.end)
        end, unit, mults, rule, noun = self.unit_after(core)
        if end < 0:
            return None
        step = core.step
        if rule == "model-size":
            # model sizes are named by truncation: "405B" for 405.8B, "8B" for 8.03B (the 5% cap still holds)
            rule, step = "suffix", (2.0 if core.step == 1.0 else core.step)
        lo = readings(core.mantissa, step, mults, unit)
        relation, approx = self.modifiers(core.start)
        if relation == ">" and lo[0].dimension in SPREAD_OVER and re.search(r"(?i)\bover\s*$", self.text[: core.start]):
            relation = None  # "over 8 GPUs": work spread over them, not a comparison
        found = Found(core.start, end, core.start, rule, lo, None, relation, approx, noun, core.end)
        found = self.extend(found, core, unit)
        if self.math and found.rule == "digits" and not found.lo[0].unit and core.mantissa in (0.0, 1.0):
            self.structure.append((core.start, core.end))
            return None  # 0 and 1 in a formula are structure, not claims (signed too: "(-1)^k")
        sign = core.start - 1
        if (
            sign >= 0
            and self.text[sign] in SIGN_BEFORE
            and (sign == 0 or self.text[sign - 1] in SIGN_CONTEXT)
            and not self.is_blocked(sign)
            and found.hi is None
        ):
            lo = tuple(replace(r, mantissa=-r.mantissa) for r in found.lo)
            found = replace(found, start=sign, num_start=sign, lo=lo, rule="signed")
        return found

    def extend(self, found: Found, core: _Core, unit: str | None) -> Found:
        """Ranges, ratios and postfix relations that continue a quantity."""
        text = self.text
        between = re.search(r"(?i)\bbetween\s*$", text[: core.start])
        joiner = re.compile(r"\s+and\s+") if between else RANGE_DASH_RE
        dash = joiner.match(text, found.end)
        if dash and not self.is_blocked(dash.end()):
            other = self.digit_core(dash.end())
            if other is not None:
                hi = self.quantity_at(other)
                if hi is not None and hi.hi is None:
                    lo = found.lo
                    if unit is None and hi.lo[0].unit:
                        lo = tuple(replace(h, mantissa=core.mantissa, step=core.step) for h in hi.lo)
                    rule = "range"
                    span = (other.start, other.end)
                    return replace(found, end=hi.end, rule=rule, lo=lo, hi=hi.lo, noun=hi.noun, hi_span=span)
        if unit is None and found.rule == "digits":
            for pattern, rule in ((RATIO_RE, "ratio"), (IN_RE, "ratio"), (SLASH_RE, "ratio")):
                m = pattern.match(text, core.end)
                other = self.digit_core(m.end()) if m else None
                if m and other is not None and other.mantissa:
                    if pattern is SLASH_RE and not (
                        core.mantissa < other.mantissa and (self.math or re.match(r"\s+of\b", text[other.end :]))
                    ):
                        break  # "3/4 of the layers" is a fraction; "192/128" and "80/8" are two numbers
                    value = core.mantissa / other.mantissa
                    lo = (Reading(value, math.inf, 1.0, "number", ""),)
                    return replace(found, end=other.end, rule=rule, lo=lo)
        end, rel = self.postfix(found.end)
        if rel:
            return replace(found, end=end, relation=rel)
        return found

    # -- words ----------------------------------------------------------------------------------------
    def word_quantities(self, taken: list[tuple[int, int]]) -> list[Found]:
        """Quantities written in words: cardinals, fractions, multiples, '-fold'."""
        text = self.text
        words = [(m.group(0), m.start(), m.end()) for m in WORD_RE.finditer(text)]
        out: list[Found] = []
        i = 0
        while i < len(words):
            w, s, _e = words[i]
            lw = w.lower()
            if self.is_blocked(s) or any(a <= s < b for a, b in taken):
                i += 1
                continue
            found, used = self.word_at(words, i)
            if found is not None:
                out.append(found)
                i += max(used, 1)
                continue
            del lw
            i += 1
        return out

    def word_at(self, words: list[tuple[str, int, int]], i: int) -> tuple[Found | None, int]:
        """The word quantity starting at word ``i`` and how many words it used."""
        text = self.text
        w, s, e = words[i]
        lw = w.lower()
        seq = [x[0].lower() for x in words[i : i + 8]]
        head = lw.split("-")[0]
        if head in {"a", "an"} and len(seq) > 1 and words[i + 1][1] - e <= 1:
            article = self.article_number(words, i)
            if article is not None:
                return article
        if head in {"a", "an"}:
            if len(seq) < 2 or (seq[1] not in SCALE_WORDS and seq[1] not in FRACTION_WORDS and "-" not in lw):
                return None, 0
        elif head not in NUMBER_VOCAB and not lw.endswith("fold"):
            return None, 0  # most words are not numbers: leave before the costlier checks
        rel, approx = self.modifiers(s)
        lo: tuple[Reading, ...]
        fold = fold_factor(lw)
        if fold:
            lo = (Reading(fold, math.inf, 1.0, "factor", "x"),)
            return Found(s, e, s, "multiple-words", lo, None, rel, approx, None, e), 1
        if lw == "halves" and i and words[i - 1][0].lower() in HALVES_AS_NOUN:
            return None, 1  # "the two halves", "in halves": a noun (a cardinal before it counts)
        if lw in MULTIPLE_WORDS:
            lo = (Reading(MULTIPLE_WORDS[lw], math.inf, 1.0, "factor", "x"),)
            return Found(s, e, s, "multiple-words", lo, None, rel, approx, None, e), 1
        if lw == "half" and len(seq) > 2 and seq[1] in {"a", "an"}:
            article = self.article_number(words, i + 1)
            if article is not None:  # "half a day", "half a dozen"
                a = article[0]
                lo = tuple(replace(r, mantissa=r.mantissa / 2, step=math.inf) for r in a.lo)
                return replace(a, start=s, num_start=s, lo=lo, relation=rel, approx=approx), 3
        if lw == "half":
            lo = (Reading(0.5, math.inf, 1.0, "number", ""),)
            return Found(s, e, s, "fraction-words", lo, None, rel, approx, _noun_after(text, e), e), 1
        # fractions: "a third", "two thirds", "one-third"
        head, _, tail = lw.partition("-")
        if tail in FRACTION_WORDS and (head in {"a", "an", "one"} or parse_cardinal([head])):
            num = 1 if head in {"a", "an", "one"} else parse_cardinal([head]).value  # type: ignore[union-attr]
            lo = (Reading(num / FRACTION_WORDS[tail], math.inf, 1.0, "number", ""),)
            return Found(s, e, s, "fraction-words", lo, None, rel, approx, _noun_after(text, e), e), 1
        if len(seq) > 1 and seq[1] in FRACTION_WORDS and seq[1] not in {"half"} and words[i + 1][1] - e <= 1:
            num_w = 1 if lw in {"a", "an", "one"} else (parse_cardinal([lw]) or None)
            num = num_w if isinstance(num_w, int) else (num_w.value if num_w else None)
            if num and (lw in {"a", "an", "one"} or seq[1].endswith("s")):
                lo = (Reading(num / FRACTION_WORDS[seq[1]], math.inf, 1.0, "number", ""),)
                end = words[i + 1][2]
                return Found(s, end, s, "fraction-words", lo, None, rel, approx, _noun_after(text, end), end), 2
        # cardinals, possibly hyphen-joined to a unit: "eight-GPU", "two-stage"
        parts = lw.split("-")
        card = parse_cardinal(seq) if len(parts) == 1 or parse_cardinal([lw]) else parse_cardinal(parts[:1])
        if card is None:
            return None, 0
        if len(parts) > 1 and parse_cardinal([lw]) is None:
            # "eight-GPU node": the cardinal is the first part, the rest is its unit or noun
            first_end = s + len(parts[0])
            unit_m = UNIT_RE.match(text, first_end)
            unit = unit_m.group("unit") if unit_m and unit_m.end() <= e else None
            if card.weak and (unit is None or _dimension(unit) not in MEASURE_DIMENSIONS):
                return None, 1
            lo = readings(card.value, _int_step(card.value), (1.0,), unit)
            noun = None if unit else "-".join(parts[1:])
            return Found(s, e, s, "words", lo, None, rel, approx, noun, first_end), 1
        end = words[i + card.used - 1][2]
        dozen = DOZEN_RE.match(text, end)
        if dozen and not card.weak:  # "two dozen requests"
            d_end = dozen.end()
            d_core = _Core(s, d_end, 12.0 * card.value, _int_step(12 * card.value), (1.0,), "words")
            d_unit_end, d_unit, d_mults, _r, d_noun = self.unit_after(d_core)
            lo = readings(12.0 * card.value, _int_step(12 * card.value), d_mults, d_unit)
            return Found(s, max(d_unit_end, d_end), s, "words", lo, None, rel, approx, d_noun, d_end), card.used + 1
        core = _Core(s, end, float(card.value), _int_step(card.value), (1.0,), "words", card.weak)
        unit_end, unit, mults, _rule, noun = self.unit_after(core)
        if unit_end < 0:
            return None, card.used
        ratio = IN_RE.match(text, end)
        if ratio and unit is None:
            nxt = [x for x in words if x[1] == ratio.end()]
            other = parse_cardinal([x[0].lower() for x in words if x[1] >= ratio.end()][:4]) if nxt else None
            if other and other.value:
                lo = (Reading(card.value / other.value, math.inf, 1.0, "number", ""),)
                used_end = [x for x in words if x[1] >= ratio.end()][other.used - 1][2]
                return Found(s, used_end, s, "ratio", lo, None, rel, approx, None, end), card.used + 2 + other.used
        if card.weak and (unit is None or _dimension(unit) not in MEASURE_DIMENSIONS | COUNT_DIMENSIONS):
            return None, card.used
        if card.weak and unit and _dimension(unit) in COUNT_DIMENSIONS:
            if re.match(r"['’]s?\b", text[unit_end:]):
                return None, card.used  # "one token's cache": a per-unit phrase, not a count
            prev = text[:s].split()[-1:] or [""]
            if not prev[0] or prev[0][-1] in ".!?,;:(" or prev[0].lower() in CLAUSE_OPENERS:
                return None, card.used  # "so one head holds 160 vectors": a generic subject (each head)
        lo = readings(float(card.value), _int_step(card.value), mults, unit)
        found = Found(s, unit_end, s, "words", lo, None, rel, approx, noun, end)
        end2, post = self.postfix(found.end)
        if post:
            found = replace(found, end=end2, relation=post)
        return found, card.used

    def article_number(self, words: list[tuple[str, int, int]], i: int) -> tuple[Found, int] | None:
        """'a'/'an' as the number one: before a unit of measure ("under a minute", "a week") or 'dozen'."""
        w, s, _e = words[i]
        nxt, _n_start, n_end = words[i + 1]
        lw, ln = w.lower(), nxt.lower()
        rel, approx = self.modifiers(s)
        if ln == "dozen":
            core = _Core(s, n_end, 12.0, 1.0, (1.0,), "words")
            unit_end, unit, mults, _rule, noun = self.unit_after(core)
            lo = readings(12.0, 1.0, mults, unit)
            return Found(s, max(unit_end, n_end), s, "words", lo, None, rel, approx, noun, n_end), 2
        if ln not in ARTICLE_UNITS or lw not in {"a", "an"}:
            return None
        if ln == "second" and not (rel or approx):
            return None  # "a second draft": an ordinal, unless it is compared ("within a second")
        if re.match(r"['’]s?\b", self.text[n_end:]):
            return None  # "a day's drift": a span named, not a count
        prev = self.text[:s].split()[-1:] or [""]
        if (s and not prev[0]) or prev[0][-1:].isdigit() or prev[0] in UNIT_WORDS or prev[0].lower() in PER_WORDS:
            return None  # "30.72 TB a day", "twice a week", "$10^6$ requests a day": a rate, not a count of one
        lo = readings(1.0, 1.0, (1.0,), ln)
        return Found(s, n_end, s, "words", lo, None, rel, approx, None, n_end), 2

    # -- all ------------------------------------------------------------------------------------------
    def scan(self) -> list[Found]:
        """Every quantity in the text, in order."""
        out: list[Found] = []
        i = 0
        text = self.text
        while i < len(text):
            if text[i].isdigit() and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "._") or PARALLEL_RE.search(text, 0, i)
            ):
                core = self.digit_core(i)
                if core is not None:
                    found = self.quantity_at(core)
                    if found is not None:
                        out.append(found)
                        i = max(found.end, core.end)
                        continue
                    i = core.end
                    while i < len(text) and (text[i].isalnum() or text[i] in "._"):
                        i += 1
                    continue
            i += 1
        taken = [(f.start, f.end) for f in out]
        out.extend(self.word_quantities(taken))
        out.extend(self.unread(out))
        return sorted(out, key=lambda f: f.num_start)

    def unread(self, found: list[Found]) -> list[Found]:
        """Tokens holding a digit that no quantity, identifier rule or structure rule accounts for.

        Nothing passes unread: each such token becomes a quantity of rule ``unread`` (its first number,
        plain), which fails the check as ``claim-unread`` unless a marker binds or exempts it.
        """
        text = self.text
        seen = bytearray(len(text))
        for s, e in [*((f.start, f.end) for f in found), *self.blocked, *self.structure]:
            seen[s:e] = b"\x01" * (e - s)
        out: list[Found] = []
        i = 0
        while i < len(text):
            if not (text[i].isdigit() and not seen[i]):
                i += 1
                continue
            s, e = i, i
            while s > 0 and not text[s - 1].isspace():
                s -= 1
            while e < len(text) and not text[e].isspace():
                e += 1
            while s < i and text[s] in UNREAD_TRIM:
                s += 1
            while e > i + 1 and text[e - 1] in UNREAD_TRIM:
                e -= 1
            m = re.match(r"(\d+)(?:\.(\d+))?", text[i:e])
            value = float(m.group(0)) if m else 0.0
            lo = (Reading(value, step_of(m.group(1), m.group(2)) if m else 1.0, 1.0, "number", ""),)
            out.append(Found(s, e, s, "unread", lo, num_end=e))
            i = e
        return out


def _int_step(value: int) -> float:
    return step_of(str(value), None)


def _dimension(unit: str) -> str:
    return unit_info(unit)[2]


def _noun_after(text: str, end: int) -> str | None:
    m = re.match(r"\s+(?:the\s+|of\s+the\s+)?([A-Za-z][\w-]*)", text[end:])
    return m.group(1) if m and m.group(1).lower() not in STOP_WORDS else None


@functools.lru_cache(maxsize=4096)
def _scan(text: str, math_mode: bool, unit_hint: str | None) -> tuple[Found, ...]:
    # cached: re-checking an edited (or mutated) answer rescans only the runs that changed
    return tuple(Scanner(text, math_mode=math_mode, unit_hint=unit_hint).scan())


def scan(text: str, *, math_mode: bool = False, unit_hint: str | None = None) -> list[Found]:
    """Every quantity in ``text``; ``unit_hint`` is the unit plain numbers take (a table column's)."""
    return list(_scan(text, math_mode, unit_hint))
