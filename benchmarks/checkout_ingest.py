"""The child process of sidebyside.py: one first ingest by the code of another checkout.

    python benchmarks/checkout_ingest.py TREE RAW OUT [--linked]

Imports the pipeline of TREE (a checkout's root, put first on sys.path), ingests RAW into
OUT with translation linking put off (or, with --linked, on: the command's default), and
prints one JSON line: wall seconds, the scan
(until the last batch is read) and what follows it, CPU seconds of this process and of its
worker processes, and peak RSS. TREE's code may be of any age, so its modules are reached
by name, untyped: an older checkout may lack what this one has.
"""

from __future__ import annotations

import importlib
import inspect
import json
import resource
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peak import own_peak_mib

if TYPE_CHECKING:
    from collections.abc import Iterator


def first_ingest(tree: str, raw: Path, out: Path, *, linked: bool = False) -> dict[str, float]:
    """Ingest RAW into OUT with the pipeline of TREE (LINKED: translations linked)."""
    sys.path.insert(0, tree)
    ingest_module = importlib.import_module("pipeline.ingest")
    executor = ingest_module.executor
    scanned: list[float] = []
    original = executor.run

    def run(*args: Any, **kwargs: Any) -> Iterator[Any]:  # noqa: ANN401 - any checkout's
        yield from original(*args, **kwargs)
        scanned.append(time.perf_counter())

    executor.run = run
    # Checkouts older than the option linked no translations on a first ingest anyway.
    # Since IngestOptions, ingest() takes its options as keywords (`options` among them).
    options = {"link_translations": False}
    parameters = inspect.signature(ingest_module.ingest).parameters
    if linked or ("link_translations" not in parameters and "options" not in parameters):
        options = {}
    start, cpu = time.perf_counter(), time.process_time()
    ingest_module.ingest([raw], out=out, **options)
    wall, main_cpu = time.perf_counter() - start, time.process_time() - cpu
    scan_end = scanned[0] if scanned else time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall": wall,
        "scan": scan_end - start,
        "after": wall - (scan_end - start),
        "main_cpu": main_cpu,
        "workers_cpu": children.ru_utime + children.ru_stime,
        "rss_mib": own_peak_mib(),
        # The largest peak of a worker process (forked: what it shares counts in both).
        "workers_rss_mib": children.ru_maxrss / 1024,
    }


if __name__ == "__main__":
    linked = sys.argv[4:] == ["--linked"]
    print(
        json.dumps(first_ingest(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), linked=linked))
    )
