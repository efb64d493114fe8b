"""The messages of ``pagefind --service``: base64 of a JSON object, each followed by a comma.

A request is ``{"message_id": n, "payload": {"type": ..., ...}}``; an answer names the request's id (an
answer to a message the service could not parse names none, and carries the message back). Pure functions:
the process itself is driven by :mod:`qbank.search.stream`.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

SEPARATOR = b","


@dataclass(frozen=True)
class Answer:
    """One answer of the service: the id of the request it answers (None when the service could not tell),
    its type (``NewIndex``, ``IndexedFile``, ``WriteFiles``, ``Error``, ...) and its payload."""

    message_id: int | None
    kind: str
    payload: dict[str, Any]


def request(message_id: int, payload: dict[str, Any]) -> bytes:
    """One request on the wire, separator included."""
    body = json.dumps({"message_id": message_id, "payload": payload})  # ASCII escapes: faster to write than UTF-8
    return base64.b64encode(body.encode("ascii")) + SEPARATOR


def answers(buffer: bytes) -> tuple[list[Answer], bytes]:
    """The complete answers at the start of ``buffer`` and the unfinished rest; raises ValueError on bytes that
    are not an answer (the service wrote something else on its output)."""
    *done, rest = buffer.split(SEPARATOR)
    return [_answer(chunk) for chunk in done], rest


def _answer(chunk: bytes) -> Answer:
    try:
        doc = json.loads(base64.b64decode(chunk, validate=True))
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a Pagefind answer: {chunk[:60]!r}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("payload"), dict):
        raise ValueError(f"not a Pagefind answer: {chunk[:60]!r}")
    payload: dict[str, Any] = doc["payload"]
    message_id = doc.get("message_id")
    if message_id is None and isinstance(payload.get("original_message"), str):
        try:  # an answer to a message it could not read carries the message back
            message_id = json.loads(payload["original_message"]).get("message_id")
        except (json.JSONDecodeError, AttributeError):
            message_id = None
    return Answer(message_id if isinstance(message_id, int) else None, str(payload.get("type", "")), payload)
