"""MTGJSON: AllPrintings (xz), verified against its published sha256; Meta.json's build."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pipeline.fetching.client import FetchError
from pipeline.fetching.job import ACCEPT_JSON, ACCEPT_TEXT, ACCEPT_XZ, Job, parse_json

if TYPE_CHECKING:
    from pipeline.fetching.client import Client

NAME = "mtgjson"
DEFAULT = "https://mtgjson.com/api/v5"
FILE = "AllPrintings.json.xz"
_DIGEST = re.compile(r"[0-9a-fA-F]{64}")


def plan(client: Client, api: str) -> list[Job]:
    """The AllPrintings download, with the build's version and date from Meta.json."""
    base = api.rstrip("/")
    meta_url = f"{base}/Meta.json"
    meta = parse_json(
        client.get(meta_url, accept=ACCEPT_JSON), meta_url, "Meta.json", client.settings.limits
    )
    build = (meta.get("meta") or meta.get("data")) if isinstance(meta, dict) else None
    if not isinstance(build, dict) or not isinstance(build.get("version"), str):
        raise FetchError(meta_url, "Meta.json has no meta.version")
    extra = {k: build[k] for k in ("version", "date") if isinstance(build.get(k), str)}
    url = f"{base}/{FILE}"

    def digest() -> str:
        return published_digest(client, f"{url}.sha256")

    return [Job(NAME, "AllPrintings", f"mtgjson/{FILE}", url, ACCEPT_XZ, digest, extra)]


def published_digest(client: Client, url: str) -> str:
    """The hex sha256 a `.sha256` file holds (maybe followed by the file's name)."""
    text = client.get(url, accept=ACCEPT_TEXT, limit=4096).decode("ascii", errors="replace")
    first = text.split()[0] if text.split() else ""
    if not _DIGEST.fullmatch(first):
        raise FetchError(url, f"not a sha256 digest: {text.strip()[:80]!r}")
    return first.lower()
