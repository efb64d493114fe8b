"""Where the epoch's record lives between deploys: a local file, or one object in the private bucket.

The record holds no secret in the clear (the epoch key is sealed to the release identity), but it names
the readers' identifiers, so it goes to the private bucket, never the public one. Deploys run one at a
time (the workflow's concurrency group), so a plain overwrite is enough.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from ..atomic import write_atomic
from .state import EpochError, EpochState


def _split(location: str) -> tuple[str, str] | None:
    if not location.startswith("s3://"):
        return None
    u = urlparse(location)
    if not u.netloc or not u.path.strip("/"):
        raise ValueError(f"an epoch record location must be a path or s3://bucket/key, not {location!r}")
    return u.netloc, u.path.lstrip("/")


def load(location: str, endpoint_url: str | None = None) -> EpochState | None:
    """The record at ``location``, or None when there is none yet."""
    where = _split(location)
    if where is None:
        path = Path(location).expanduser()
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:  # a folder, an unreadable file: never taken for "no epoch yet"
            raise EpochError(f"{path}: cannot read the epoch record ({type(exc).__name__})") from None
        return EpochState.from_json(data, str(path))
    from ..deploy.release import fetch_object
    from ..deploy.s3 import Target, make_client

    bucket, key = where
    body = fetch_object(make_client(endpoint_url), Target(bucket, ""), key)
    return None if body is None else EpochState.from_json(body, location)


def save(location: str, state: EpochState, endpoint_url: str | None = None) -> None:
    """Write the record (a local file 0600, written aside then renamed; or the private object)."""
    body = state.to_json()
    where = _split(location)
    if where is None:
        path = Path(location).expanduser()
        try:
            write_atomic(path, body, 0o600)
        except OSError as exc:
            raise EpochError(f"{path}: cannot write the epoch record ({type(exc).__name__})") from None
        return
    from ..deploy.s3 import make_client, with_retries

    bucket, key = where
    client = make_client(endpoint_url)
    with_retries(lambda: client.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json",
                                           CacheControl="no-store"))
