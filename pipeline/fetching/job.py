"""What a source asks the fetcher for: one file, where it goes, how it is checked."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline.decoding.look import check_limits
from pipeline.errors import InputError
from pipeline.fetching.client import FetchError
from pipeline.limits import Limits

if TYPE_CHECKING:
    from collections.abc import Callable

ACCEPT_JSON = "application/json"
ACCEPT_GZIP = "application/gzip, application/octet-stream;q=0.9, */*;q=0.8"
ACCEPT_XZ = "application/x-xz, application/octet-stream;q=0.9, */*;q=0.8"
ACCEPT_TEXT = "text/plain, */*;q=0.8"
ACCEPT_HTML = "text/html, application/xhtml+xml;q=0.9, */*;q=0.8"


@dataclass(frozen=True, slots=True)
class Job:
    """One file of a source: its URL, its path under raw/, and how it is verified."""

    source: str
    item: str  # which of the source's files; a newer one under another name replaces it
    path: str
    url: str
    accept: str
    digest: Callable[[], str] | None = None  # the published sha256, asked once the body came
    extra: dict[str, str] = field(default_factory=dict)  # kept in the state beside the file


def parse_json(body: bytes, url: str, what: str, limits: Limits | None = None) -> Any:  # noqa: ANN401 - JSON is any value
    """BODY as JSON, or a FetchError naming URL and WHAT it should have been.

    The body is looked over for the reader's JSON caps (LIMITS: nesting, strings, numbers)
    before it is parsed: an index nested 200,000 deep is refused, not a RecursionError.
    """
    try:
        check_limits(body, url, limits or Limits())
    except InputError as exc:
        raise FetchError(url, f"{what}: {exc.reason}") from exc
    try:
        return json.loads(body)
    except ValueError as exc:
        msg = f"{what} is not JSON ({exc})"
        raise FetchError(url, msg) from exc
