"""Verification spread over CI machines: scripts partitioned into N shards by their recorded run time.

``partition`` is the pure part (longest-processing-time-first greedy); ``plan`` reads the recorded times
from the cache index, the shard count from ``pyproject.toml`` and reads and writes the plan file that a
CI setup job hands to every shard job (``docs/scale.md``).
"""
