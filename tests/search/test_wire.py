"""The service's messages: base64 of JSON followed by a comma, read back however the bytes arrive."""

from __future__ import annotations

import base64
import json

import pytest

from qbank.search.wire import Answer, answers, request


def wire(doc: object) -> bytes:
    return base64.b64encode(json.dumps(doc).encode()) + b","


def test_a_request_is_base64_json_and_a_comma() -> None:
    raw = request(7, {"type": "AddFile", "file_contents": "<p>é ✓</p>"})
    assert raw.endswith(b",") and raw.count(b",") == 1  # base64 never holds a comma
    doc = json.loads(base64.b64decode(raw[:-1]))
    assert doc == {"message_id": 7, "payload": {"type": "AddFile", "file_contents": "<p>é ✓</p>"}}


def test_answers_split_at_the_commas_and_keep_the_unfinished_rest() -> None:
    one = wire({"message_id": 1, "payload": {"type": "NewIndex", "index_id": 0}})
    two = wire({"message_id": 2, "payload": {"type": "IndexedFile", "page_url": "/a/"}})
    stream = one + two
    got: list[Answer] = []
    rest = b""
    for i in range(0, len(stream), 5):  # the bytes arrive five at a time
        done, rest = answers(rest + stream[i:i + 5])
        got += done
    assert rest == b""
    assert got == [Answer(1, "NewIndex", {"type": "NewIndex", "index_id": 0}),
                   Answer(2, "IndexedFile", {"type": "IndexedFile", "page_url": "/a/"})]
    done, rest = answers(one + two[:10])
    assert [a.message_id for a in done] == [1] and rest == two[:10]


def test_an_answer_to_an_unreadable_message_names_it_from_the_message_carried_back() -> None:
    original = json.dumps({"message_id": 9, "payload": {"type": "Nonsense"}})
    (got,), _ = answers(wire({"payload": {"type": "Error", "message": "unknown", "original_message": original}}))
    assert got == Answer(9, "Error", {"type": "Error", "message": "unknown", "original_message": original})
    (got,), _ = answers(wire({"payload": {"type": "Error", "message": "?", "original_message": "not json"}}))
    assert got.message_id is None and got.kind == "Error"
    (got,), _ = answers(wire({"message_id": "3", "payload": {"type": "Error"}}))
    assert got.message_id is None  # an id that is not a number names nothing


@pytest.mark.parametrize("junk", [b"hello,", base64.b64encode(b"[1, 2]") + b",",
                                  base64.b64encode(b"{\"payload\": 3}") + b",", base64.b64encode(b"\xff\xfe") + b","])
def test_bytes_that_are_not_an_answer_are_refused(junk: bytes) -> None:
    with pytest.raises(ValueError, match="not a Pagefind answer"):
        answers(junk)
