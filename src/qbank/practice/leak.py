"""Premium practice text for the build's leak scan: premium tests' items and drills' edge cases and references.

The paywall's scan fingerprints answers and derivations; this adds the practice content it seals, so
the same scan of every built file (plain and gzip) refuses a site that shows any of it in clear. Runs
of words a drill also publishes (its starter, public tests and statement share signatures with the
reference) are not fingerprints.
"""

from __future__ import annotations

from pathlib import Path

from ..paywall.leak import scan_site
from ..problems import Problem, error
from ..seal.premium_text import K, PremiumPrints, Source, located_words
from .load import Bank, drill_path, practice_file
from .model import ChoiceItem, NumericItem, OrderItem, PracticeTest


def items_text(test: PracticeTest) -> str:
    """Every word a premium test's items show a reader, one item per paragraph."""
    parts: list[str] = []
    for item in test.items:
        bits = [item.prompt, item.explanation]
        if isinstance(item, ChoiceItem):
            bits += [f"{o.text} {o.why}" for o in item.options]
        elif isinstance(item, OrderItem):
            bits += item.order
        elif isinstance(item, NumericItem):
            bits.append(item.unit)
        parts.append(" ".join(bits))
    return "\n\n".join(parts)


def _runs(text: str) -> set[tuple[str, ...]]:
    ws = [w for w, _, _ in located_words(text)]
    return {tuple(ws[i : i + K]) for i in range(len(ws) - K + 1)}


def practice_prints(bank: Bank) -> PremiumPrints:
    """Fingerprints of the premium practice texts, less the runs the site publishes on purpose."""
    sources: list[Source] = []
    public: set[tuple[str, ...]] = set()
    for slug, test in sorted(bank.tests.items()):
        if test.access == "premium":  # free text never exempts anything (a paste into a free test is a leak)
            sources.append(Source(practice_file(slug), 1, f"practice-{slug}", "premium practice test", "",
                                  items_text(test)))
    for slug, files in sorted(bank.drill_sources.items()):
        for name in ("edge_tests.py", "reference.py"):
            sources.append(Source(drill_path(slug, name), 1, f"drill-{slug}", f"drill {name}", "",
                                  "```python\n" + files[name] + "\n```"))
        for name in ("starter.py", "public_tests.py"):
            public |= _runs("```python\n" + files[name] + "\n```")
        public |= _runs(bank.drills[slug].statement)
    prints = PremiumPrints.of(sources)
    for run in public & set(prints.long):
        del prints.long[run]
    return prints


def practice_leaks(bank: Bank, built: Path, shown: str) -> list[Problem]:
    """``premium-leak`` for every built file that shows premium practice text in clear."""
    return [
        error(f"{shown}/{leak.file}", 0, 0, "premium-leak",
              f"premium text of {leak.source} ({leak.what}) is in this file")
        for leak in scan_site(built, practice_prints(bank))
    ]
