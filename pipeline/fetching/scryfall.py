"""Scryfall's bulk data: the rulings file (an input) and the oracle cards (the catalog).

`GET {api}/bulk-data` lists the bulk files. Since August 2026 each entry links gzipped JSON
Lines under `jsonl_download_uri` and no longer has `download_uri`; a mirror that still has
only the old key (a JSON array) is followed too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from pipeline.fetching.client import FetchError
from pipeline.fetching.job import ACCEPT_GZIP, ACCEPT_JSON, Job, parse_json

if TYPE_CHECKING:
    from pipeline.fetching.client import Client

NAME = "scryfall"
DEFAULT = "https://api.scryfall.com"
# The bulk files fetched, and where each goes: the oracle cards are the catalog, kept in a
# hidden folder the reader passes over and the ingest loads as its catalog.
FILES = {"rulings": "scryfall/rulings", "oracle_cards": ".catalog/scryfall-oracle-cards"}


def plan(client: Client, api: str) -> list[Job]:
    """Read the bulk-data index: the download of each of FILES, newest format first."""
    url = f"{api.rstrip('/')}/bulk-data"
    index = parse_json(
        client.get(url, accept=ACCEPT_JSON), url, "the bulk-data index", client.settings.limits
    )
    entries = index.get("data") if isinstance(index, dict) else None
    if not isinstance(entries, list):
        raise FetchError(url, "the bulk-data index has no 'data' list")
    # An entry is taken only by a type that is a string: {"type": ["rulings"]} is no entry.
    by_type = {
        e["type"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("type"), str)
    }
    jobs = []
    for kind, stem in FILES.items():
        entry = by_type.get(kind)
        if entry is None:
            types = ", ".join(sorted(str(t) for t in by_type))
            raise FetchError(url, f"the bulk-data index has no {kind!r} entry (types: {types})")
        link, suffix = _link(entry, kind, url)
        accept = ACCEPT_GZIP if suffix.endswith(".gz") else ACCEPT_JSON
        updated = entry.get("updated_at")
        extra = {"updated_at": updated} if isinstance(updated, str) else {}
        jobs.append(Job(NAME, kind, stem + suffix, link, accept, extra=extra))
    return jobs


def _link(entry: dict[str, object], kind: str, index: str) -> tuple[str, str]:
    """The entry's download URL and the suffix of the file it gives."""
    jsonl = entry.get("jsonl_download_uri")
    if isinstance(jsonl, str) and jsonl:
        return urljoin(index, jsonl), ".jsonl.gz"
    old = entry.get("download_uri")
    if isinstance(old, str) and old:
        link = urljoin(index, old)
        return link, ".json.gz" if urlsplit(link).path.endswith(".gz") else ".json"
    keys = ", ".join(sorted(entry))
    msg = (
        f"bulk-data entry {kind!r} has neither jsonl_download_uri nor download_uri "
        f"(its keys: {keys})"
    )
    raise FetchError(index, msg)
