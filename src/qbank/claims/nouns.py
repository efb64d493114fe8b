"""Count nouns: the units counts are declared in, and how binding and mutation treat them.

A count is a number of things: ``8 GPUs``, ``4 nodes``, ``2 replicas``. The nouns a script may declare
a count in are the count units of :mod:`qbank.units` (``claim("h100_nodes", 4, unit="nodes")``), and
prose spells them in the plural or the singular (``one node``, ``an 8-GPU node``). The rule binding
follows: a count binds only to a value declared in the *same* count noun, so "4 nodes" never binds to a
value declared in instances, requests or nothing at all; a bare number ("TP = 4") may bind to any count.
"""

from __future__ import annotations

from .lexicon import COUNT_DIMENSIONS, UNIT_WORDS

COUNT_NOUNS = COUNT_DIMENSIONS
"""Every count unit (its dimension is its own name)."""

# the noun a count-noun mutant writes instead: a different thing of a similar kind
SWAPS = {
    "GPUs": "nodes",
    "nodes": "GPUs",
    "instances": "nodes",
    "replicas": "nodes",
    "ranks": "GPUs",
    "servers": "GPUs",
    "requests": "tokens",
    "tokens": "requests",
    "sequences": "tokens",
    "users": "requests",
    "layers": "heads",
    "heads": "layers",
    "experts": "layers",
    "blocks": "pages",
    "pages": "blocks",
    "steps": "tokens",
    "rounds": "steps",
    "iterations": "steps",
}


def is_count(dimension: str) -> bool:
    """Whether a dimension is a count noun."""
    return dimension in COUNT_NOUNS


def swap_for(unit: str) -> str:
    """Another count noun to write in place of ``unit`` (a count-noun mutant)."""
    return SWAPS.get(unit, "requests" if unit != "requests" else "tokens")


def spelled(unit: str, singular: bool) -> str:
    """How prose writes a count unit: 'nodes', or 'node' in the singular ('one node', '8-node')."""
    if singular and unit.endswith("s") and unit[:-1] in UNIT_WORDS:
        return unit[:-1]
    return unit
