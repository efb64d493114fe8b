"""qbank: the content pipeline behind an interview-prep site for LLM inference engineers."""

from __future__ import annotations

__version__ = "0.1.0"
