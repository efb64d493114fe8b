"""Backoff and retry classification around each S3 call (own retries, on top of botocore's)."""

from __future__ import annotations

import socket

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from qbank.deploy import S3Store, Target
from qbank.deploy.s3 import is_retryable, with_retries


def client_error(code: str, status: int) -> ClientError:
    """A ClientError as botocore raises it for an S3 error response."""
    response = {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError(response, "PutObject")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("exc", "retry"),
    [
        (client_error("SlowDown", 503), True),
        (client_error("ServiceUnavailable", 503), True),
        (client_error("InternalError", 500), True),
        (client_error("Whatever", 502), True),
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), True),
        (ConnectionResetError(), True),
        (client_error("AccessDenied", 403), False),
        (client_error("NoSuchBucket", 404), False),
        (client_error("InvalidArgument", 400), False),
        (ValueError("bug"), False),
    ],
)
def test_what_is_retried(exc: Exception, retry: bool) -> None:
    assert is_retryable(exc) is retry


def test_backoff_doubles_under_a_cap_and_gives_up_after_the_last_attempt() -> None:
    calls: list[int] = []
    waits: list[float] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 4:
            raise client_error("SlowDown", 503)
        return "ok"

    assert with_retries(flaky, attempts=6, base=1.0, cap=3.0, sleep=waits.append) == "ok"
    assert len(calls) == 4 and len(waits) == 3
    assert all(0 <= w <= min(3.0, 2**n) for n, w in enumerate(waits))

    def always() -> None:
        raise client_error("SlowDown", 503)

    waits.clear()
    with pytest.raises(ClientError):
        with_retries(always, attempts=3, sleep=waits.append)
    assert len(waits) == 2  # no wait after the last attempt


def test_an_unreachable_endpoint_is_retried_then_reported() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=2),
    )
    waits: list[float] = []
    store = S3Store(client, Target("bkt", "site"), sleep=waits.append)
    with pytest.raises(EndpointConnectionError):
        store.read_manifest()
    assert len(waits) == 5  # six attempts in all
