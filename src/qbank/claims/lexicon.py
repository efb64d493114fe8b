"""Words of the quantity grammar: unit spellings, magnitude suffixes, comparatives and approximations.

Unit spellings map onto :mod:`qbank.units` symbols (with a multiplier where prose uses a unit the table
lacks, e.g. ``kW``), so prose and verification scripts meet in the same base units.
"""

from __future__ import annotations

import re

from ..units import UNITS

COUNT_DIMENSIONS = frozenset(
    u.dimension for u in UNITS.values() if u.dimension == u.symbol and u.scale == 1.0 and "/" not in u.symbol
) - {"fraction", "x"}

# prose spelling -> (qbank unit symbol, multiplier); case-sensitive (MB is not mb)
UNIT_WORDS: dict[str, tuple[str, float]] = {s: (s, 1.0) for s in UNITS if s not in {"h", "min", "sec", "s"}}
UNIT_WORDS.update(
    {
        "byte": ("B", 1.0),
        "bytes": ("B", 1.0),
        "bits": ("bit", 1.0),
        "kilobyte": ("KB", 1.0),
        "megabyte": ("MB", 1.0),
        "gigabyte": ("GB", 1.0),
        "terabyte": ("TB", 1.0),
        "kibibyte": ("KiB", 1.0),
        "mebibyte": ("MiB", 1.0),
        "gibibyte": ("GiB", 1.0),
        "tebibyte": ("TiB", 1.0),
        "s-1": ("Hz", 1.0),
        "s^-1": ("Hz", 1.0),
        "s⁻¹": ("Hz", 1.0),
        "kilobytes": ("KB", 1.0),
        "megabytes": ("MB", 1.0),
        "gigabytes": ("GB", 1.0),
        "terabytes": ("TB", 1.0),
        "kibibytes": ("KiB", 1.0),
        "mebibytes": ("MiB", 1.0),
        "gibibytes": ("GiB", 1.0),
        "tebibytes": ("TiB", 1.0),
        "GiB/s": ("GiB/s", 1.0),
        "Gb/s": ("Gbit/s", 1.0),
        "Tb/s": ("Tbit/s", 1.0),
        "s": ("s", 1.0),
        "sec": ("s", 1.0),
        "secs": ("s", 1.0),
        "second": ("s", 1.0),
        "seconds": ("s", 1.0),
        "millisecond": ("ms", 1.0),
        "milliseconds": ("ms", 1.0),
        "msec": ("ms", 1.0),
        "microsecond": ("us", 1.0),
        "microseconds": ("us", 1.0),
        "nanosecond": ("ns", 1.0),
        "nanoseconds": ("ns", 1.0),
        "min": ("min", 1.0),
        "mins": ("min", 1.0),
        "minute": ("min", 1.0),
        "minutes": ("min", 1.0),
        "h": ("h", 1.0),
        "hr": ("h", 1.0),
        "hrs": ("h", 1.0),
        "hour": ("h", 1.0),
        "hours": ("h", 1.0),
        "percent": ("%", 1.0),
        "per cent": ("%", 1.0),
        "percentage points": ("%", 1.0),
        "points": ("%", 1.0),
        "pp": ("%", 1.0),
        "tok/s": ("tokens/s", 1.0),
        "tokens/sec": ("tokens/s", 1.0),
        "tokens per second": ("tokens/s", 1.0),
        "token/s": ("tokens/s", 1.0),
        "watts": ("W", 1.0),
        "watt": ("W", 1.0),
        "kW": ("W", 1e3),
        "MW": ("W", 1e6),
        "parameters": ("params", 1.0),
        "parameter": ("params", 1.0),
        "param": ("params", 1.0),
        "dimensions": ("dims", 1.0),
        "dimension": ("dims", 1.0),
        "dim": ("dims", 1.0),
        "hertz": ("Hz", 1.0),
        "kilohertz": ("kHz", 1.0),
        "megahertz": ("MHz", 1.0),
        "gigahertz": ("GHz", 1.0),
        "fold": ("x", 1.0),
        "-fold": ("x", 1.0),
    }
)
for _count in sorted(COUNT_DIMENSIONS):
    if _count.endswith("s") and "-" not in _count:
        UNIT_WORDS.setdefault(_count[:-1], (_count, 1.0))  # "1 token", "8-GPU node", "one layer"
# spelled rates: "GB per second"
for _sym in [s for s in list(UNIT_WORDS) if UNIT_WORDS[s][0] in {"B", "GB", "TB", "MB", "KB", "GiB", "FLOP", "TFLOP"}]:
    _target = UNIT_WORDS[_sym][0] + "/s"
    if _target in UNITS:
        UNIT_WORDS.setdefault(f"{_sym} per second", (_target, UNIT_WORDS[_sym][1]))
        UNIT_WORDS.setdefault(f"{_sym}/sec", (_target, UNIT_WORDS[_sym][1]))
for _bad in ("x", "×", "fraction", "bits-per-token", "words", "word", "dims", "elements", "element", "b", "bps"):
    UNIT_WORDS.pop(_bad, None)  # handled by the factor rule, or too common as plain English after a number
UNIT_WORDS["elements"] = ("elements", 1.0)
UNIT_WORDS["dims"] = ("dims", 1.0)

# units of measure: after these even "one" and "a" are numbers ("one percent", "one second")
MEASURE_DIMENSIONS = frozenset(
    {"bytes", "bytes/s", "flop", "flop/s", "time", "fraction", "power", "tokens/s", "frequency"}
)
# singular unit words after which "a"/"an" is the number one ("under a minute", "a week", "an hour");
# "a second" only after a comparative or approximation ("within a second"), else it is an ordinal
ARTICLE_UNITS = frozenset(
    {
        "minute",
        "hour",
        "day",
        "week",
        "millisecond",
        "microsecond",
        "nanosecond",
        "percent",
        "second",
        "kilobyte",
        "megabyte",
        "gigabyte",
        "terabyte",
        "kibibyte",
        "mebibyte",
        "gibibyte",
        "tebibyte",
    }
)
# binary magnitudes written apart from a unit: "64 Ki entries", "1 Mi tokens"
BINARY_SUFFIXES: dict[str, float] = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}

# magnitude suffixes glued to digits: readings (decimal first); "B" needs a count or a model after it
SUFFIXES: dict[str, tuple[float, ...]] = {
    "K": (1e3, 2.0**10),
    "k": (1e3, 2.0**10),
    "M": (1e6, 2.0**20),
    "B": (1e9,),
    "T": (1e12,),
}
SCALE_AFTER: dict[str, float] = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
MODEL_NOUNS = r"(?:models?|LLMs?|MoE|dense|checkpoints?|total|active|weights|-?param(?:eter)?s?|variant|network)\b"


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


UNIT_ALT = _alternation(list(UNIT_WORDS))
# a unit (or magnitude word) right after a number: used by identifier rules to leave quantities alone
UNIT_AFTER_RE = rf"(?:\s*[-\s]?(?:{UNIT_ALT}|{_alternation(list(SCALE_AFTER))})(?![\w/])|\s*[%×x](?![\w]))"
# a unit may be followed by "/token" (per-token sizes) but not by "/s" (that is a rate, spelled in the table)
UNIT_RE = re.compile(rf"(?P<sep>[ \t\n\u00a0\u202f]{{0,3}}-?|-)(?P<unit>{UNIT_ALT})(?!\w)(?!/(?:s|sec)\b)")

# words before a number that compare (relation) or approximate (kind of tolerance)
RELATIONS: tuple[tuple[str, str], ...] = (
    (r"no more than|not more than|at most|up to|within|≤|<=|⩽|=<", "<="),
    (r"no less than|no fewer than|not less than|at least|≥|>=|⩾|=>", ">="),
    (
        r"more than|greater than|higher than|larger than|bigger than|over|above|upwards of|in excess of|exceeds?"
        r"|exceeding|beyond|>",
        ">",
    ),
    (r"less than|fewer than|lower than|smaller than|under|below|<", "<"),
)
APPROXIMATIONS: tuple[tuple[str, str], ...] = (
    (r"on the order of|of the order of|order of", "order"),
    (r"about|around|roughly|approximately|approx\.|approx|circa|ca\.|some|nearly|almost|close to|~|≈|∼|≃", "about"),
)
POSTFIX_RELATIONS: tuple[tuple[str, str], ...] = (
    (r"\+|\s+or\s+(?:more|greater|higher|above|larger|longer)", ">="),
    (r"\s+or\s+(?:less|fewer|lower|below|smaller|shorter)", "<="),
)
# "over" compares only after these words (or a percentage: "over 90%"); elsewhere it is a preposition
# ("sharded over 8 GPUs", "accumulates over 64 rows") or a division ("989 TFLOP/s over 3.35 TB/s")
OVER_AS_COMPARISON = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "'s",
        "at",
        "of",
        "to",
        "with",
        "by",
        "for",
        "from",
        "than",
        "and",
        "or",
        "just",
        "well",
        "slightly",
        "far",
        "still",
        "spends",
        "spend",
        "takes",
        "take",
        "needs",
        "need",
        "uses",
        "use",
        "reaches",
        "reach",
        "costs",
        "cost",
        "holds",
        "hold",
        "has",
        "have",
        "had",
        "stays",
        "stay",
        "remains",
        "remain",
        "gets",
        "get",
        "gives",
        "give",
        "saves",
        "save",
        "hits",
        "hit",
        "adds",
        "add",
        "cuts",
        "reduces",
        "exceeds",
        "reaching",
        "grows",
        "grow",
        "rises",
        "rise",
        "jumps",
        "jump",
        "drops",
        "drop",
        "falls",
        "fall",
        "—",
        "–",
    }
)
# words that may sit between a number and its count unit ("8 KV heads", "256 routed experts")
STOP_WORDS = frozenset(
    {
        "of",
        "the",
        "a",
        "an",
        "and",
        "or",
        "per",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "each",
        "every",
        "than",
        "that",
        "which",
        "as",
        "vs",
        "into",
        "out",
        "this",
        "these",
        "those",
        "it",
        "its",
        "their",
        "our",
        "your",
        "more",
        "less",
        "times",
        "x",
    }
)
FACTOR_COMPARATIVES = re.compile(
    r"\s+(?:more|less|fewer|faster|slower|larger|smaller|bigger|higher|lower|longer|shorter|greater|as|cheaper"
    r"|the|over|speedup|reduction|increase|improvement|throughput|memory|bandwidth)\b"
)
