"""Number words: cardinals ("seventy-two", "a hundred"), fractions ("a third") and multiples ("twice").

Only what reads as a quantity is a number here. "one", "zero", "a" and "an" are usually articles or
pronouns ("one of the heads", "a GPU"), so the grammar accepts them only in compounds ("one hundred",
"one in eight", "one third") or before a unit of measure ("one percent", "one second").
"""

from __future__ import annotations

from dataclasses import dataclass

UNITS_WORDS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS_WORDS: dict[str, int] = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SCALE_WORDS: dict[str, int] = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
ARTICLES = {"a": 1, "an": 1}
# denominators of spoken fractions, singular and plural
FRACTION_WORDS: dict[str, int] = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "quarter": 4,
    "quarters": 4,
    "fourth": 4,
    "fourths": 4,
    "fifth": 5,
    "fifths": 5,
    "sixth": 6,
    "sixths": 6,
    "eighth": 8,
    "eighths": 8,
    "tenth": 10,
    "tenths": 10,
}
# words that are a factor on their own
MULTIPLE_WORDS: dict[str, float] = {
    "twice": 2,
    "thrice": 3,
    "double": 2,
    "doubles": 2,
    "doubled": 2,
    "doubling": 2,
    "triple": 3,
    "triples": 3,
    "tripled": 3,
    "tripling": 3,
    "quadruple": 4,
    "quadruples": 4,
    "quadrupled": 4,
    "halve": 0.5,
    "halves": 0.5,
    "halved": 0.5,
    "halving": 0.5,
}
FOLD_PREFIXES: dict[str, int] = {**{k: v for k, v in UNITS_WORDS.items() if v >= 2}, **TENS_WORDS, "hundred": 100}


@dataclass(frozen=True)
class WordNumber:
    """A parsed run of number words: its value, how many words it used and whether it is a bare 'one'."""

    value: int
    used: int
    weak: bool
    """True for a lone 'one'/'zero'/'a hundred'-less article: a number only before a unit of measure."""


def _small(word: str) -> int | None:
    """0..99 from one word ('seven', 'seventy', 'seventy-two')."""
    if word in UNITS_WORDS:
        return UNITS_WORDS[word]
    if word in TENS_WORDS:
        return TENS_WORDS[word]
    head, sep, tail = word.partition("-")
    if sep and head in TENS_WORDS and tail in UNITS_WORDS and 0 < UNITS_WORDS[tail] < 10:
        return TENS_WORDS[head] + UNITS_WORDS[tail]
    return None


def parse_cardinal(words: list[str]) -> WordNumber | None:
    """The longest cardinal at the start of ``words`` (lowercase), e.g. ['two', 'hundred', 'and', 'five']."""
    total, current, used = 0, 0, 0
    last = ""  # kind of the previous word: "", small, hundred, scale, and, article
    last_scale = 10**15
    for i, w in enumerate(words):
        small = _small(w)
        if small is not None and last in {"", "hundred", "scale", "and"}:
            current += small
            last = "small"
        elif small is not None and last == "small" and current % 100 in TENS_WORDS.values() and 0 < small < 10:
            current += small  # "twenty one", written without its hyphen
        elif w in ARTICLES and last == "" and i + 1 < len(words) and words[i + 1] in SCALE_WORDS:
            current, last = 1, "article"
            continue
        elif w == "hundred" and last in {"small", "article"} and 0 < current < 10:
            current *= 100
            last = "hundred"
        elif w in SCALE_WORDS and w != "hundred" and last in {"small", "hundred", "article"}:
            scale = SCALE_WORDS[w]
            if scale >= last_scale:
                break
            total += current * scale
            current, last, last_scale = 0, "scale", scale
        elif w == "and" and last in {"hundred", "scale"} and i + 1 < len(words) and _small(words[i + 1]) is not None:
            last = "and"
            continue
        else:
            break
        used = i + 1
    if not used:
        return None
    weak = used == 1 and words[0] in {"one", "zero"}
    return WordNumber(total + current, used, weak)


def fold_factor(word: str) -> int | None:
    """'tenfold' -> 10, 'two-fold' -> 2."""
    w = word.lower()
    for suffix in ("-fold", "fold"):
        if w.endswith(suffix):
            head = w[: -len(suffix)]
            return FOLD_PREFIXES.get(head)
    return None
