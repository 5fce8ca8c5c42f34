"""`pipeline update` against the local stand-in: everything new, then nothing new.

Serves the stand-in of tests/standin.py on 127.0.0.1 (Scryfall's index as published today,
gzipped JSON Lines under `jsonl_download_uri`; MTGJSON's AllPrintings.json.xz and its
sha256; the current rules release: the real 2024-02-06 text from ../shared/realdata where
it is there) and runs `update` of every source twice into a scratch folder with the
default pause (100 ms between requests to one host), printing the
requests made, the bytes downloaded and the seconds of each run.

    .venv/bin/python benchmarks/fetch_update.py [--pause 0.1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from standin import StandIn, serving  # noqa: E402 - after the path is set

from pipeline.fetching.client import Settings  # noqa: E402
from pipeline.fetching.fetch import Upstreams  # noqa: E402
from pipeline.update import update  # noqa: E402

REAL_RULES = ROOT.parent / "shared" / "realdata" / "comprules" / "2024-02-06.txt"


def _run(stand_in: StandIn, raw: Path, out: Path, roots: dict[str, str], pause: float) -> None:
    before = len(stand_in.log)
    started = time.perf_counter()
    sources = ["scryfall", "mtgjson", "comprules"]
    report = update(sources, raw=raw, out=out, upstreams=Upstreams(**roots),
                    settings=Settings(pause=pause), workers=1)  # fmt: skip
    seconds = time.perf_counter() - started
    fetched = report.fetched
    ingested = report.ingested
    outcome = ingested.outcome.value if ingested is not None else "not ingested"
    served = sum(r.sent for r in stand_in.log[before:])
    print(f"  requests {fetched.requests} (server log: {len(stand_in.log) - before}), "
          f"downloaded {fetched.downloaded:,} bytes (server sent {served:,}), "
          f"files new {len(fetched.changed)}, fetch {fetched.seconds:.2f} s, "
          f"update {seconds:.2f} s; ingest: {outcome}")  # fmt: skip


def main() -> None:
    """Run the two updates and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pause", type=float, default=Settings().pause)
    pause = parser.parse_args().pause
    for stand_in in serving():
        roots = stand_in.upstreams()
        if REAL_RULES.is_file():
            stand_in.serve("/rules/MagicCompRules 20240206.txt", REAL_RULES.read_bytes())
        with tempfile.TemporaryDirectory() as scratch:
            raw, out = Path(scratch) / "raw", Path(scratch) / "normalized"
            rules = len(stand_in.files["/rules/MagicCompRules 20240206.txt"].body)
            print(f"update (every source), pause {pause} s, rules release {rules:,} bytes")
            print("everything new:")
            _run(stand_in, raw, out, roots, pause)
            print("nothing new:")
            _run(stand_in, raw, out, roots, pause)


if __name__ == "__main__":
    main()
