"""Answers argue the way their question needs: within a topic, no run of ``##`` headings is a template.

A "sequence" is any two headings of one answer in their order (not necessarily adjacent), after
normalising away binding markers, parenthetical asides and everything after a colon, so that
"The numbers (H100, BF16)" and "The numbers: Llama-3.1-70B" count as the same heading. Every longer
repeated sequence contains a repeated pair, so checking pairs checks them all. A pair may recur in at
most a quarter of a topic's answers (and once is never a repeat), so the old four-heading template
("The model" ... "What to measure") fails wherever it is the norm.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import yaml

from qbank.answers import code_fence_lines

from .conftest import REPO

MARKER = re.compile(r"\{[=!][^}]*\}")
ASIDE = re.compile(r"\([^)]*\)")


def normalise(heading: str) -> str:
    """Heading text without markers, asides, subtitle after a colon, punctuation or case."""
    text = MARKER.sub("", heading)
    text = ASIDE.sub("", text).split(":", 1)[0]
    text = re.sub(r"[^\w\s]", " ", text.lower())
    return " ".join(text.split())


def headings(markdown: str) -> list[str]:
    """The normalised ``##`` headings of an answer, outside code fences, in order."""
    lines = markdown.splitlines()
    fenced = code_fence_lines(lines)
    return [
        normalise(line[3:]) for line, inside in zip(lines, fenced, strict=True) if line.startswith("## ") and not inside
    ]


def repeated_pairs(by_topic: dict[str, dict[str, list[str]]]) -> list[str]:
    """Every (topic, heading pair) found in more than a quarter of the topic's answers, and in at least two."""
    found = []
    for topic, answers in sorted(by_topic.items()):
        holders: dict[tuple[str, str], list[str]] = defaultdict(list)
        for slug, heads in answers.items():
            for pair in sorted(set(combinations(heads, 2))):
                holders[pair].append(slug)
        for pair, slugs in sorted(holders.items()):
            if len(slugs) >= 2 and len(slugs) > len(answers) / 4:
                found.append(f"{topic}: {pair[0]!r} ... {pair[1]!r} in {len(slugs)}/{len(answers)}: {', '.join(slugs)}")
    return found


def answers_by_topic(root: Path) -> dict[str, dict[str, list[str]]]:
    """topic -> slug -> normalised headings, for every question that has an answer."""
    out: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for question in sorted((root / "questions").glob("*.yaml")):
        answer = root / "answers" / f"{question.stem}.md"
        if not answer.is_file():
            continue
        topic = yaml.safe_load(question.read_text(encoding="utf-8"))["topic"]
        out[topic][question.stem] = headings(answer.read_text(encoding="utf-8"))
    return out


def test_normalise_folds_asides_subtitles_and_markers() -> None:
    assert normalise("The numbers (n = 8, 16-token blocks)") == "the numbers"
    assert normalise("The numbers: Llama-3.1-70B, TP8") == "the numbers"
    assert (
        normalise('The datasheet says "about 2.3×{=ratio_bw}" everywhere') == "the datasheet says about 2 3 everywhere"
    )


def test_headings_skip_code_fences() -> None:
    text = "## One\n\n```markdown\n## Not a heading\n```\n\n## Two\n"
    assert headings(text) == ["one", "two"]


def test_a_template_is_caught_and_a_single_use_is_not() -> None:
    template = ["the model", "the numbers", "what to measure"]
    topic = {f"q{i}": template if i < 3 else [f"own {i}", f"close {i}"] for i in range(8)}
    found = repeated_pairs({"t": topic})
    assert len(found) == 3 and all("3/8" in line for line in found)
    topic["q2"] = ["own 2", "close 2"]  # two of eight is a quarter: allowed
    assert repeated_pairs({"t": topic}) == []
    assert repeated_pairs({"t": {"a": template, "b": ["x", "y"]}}) == []  # once is not a repeat
    assert len(repeated_pairs({"t": {"a": template, "b": template}})) == 3  # two answers: twice is half


def test_no_heading_sequence_repeats_in_more_than_a_quarter_of_a_topic() -> None:
    by_topic = answers_by_topic(REPO)
    assert sum(len(answers) for answers in by_topic.values()) > 0
    assert repeated_pairs(by_topic) == []
