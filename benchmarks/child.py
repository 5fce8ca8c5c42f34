"""The child process of measure.py: one function of timed.py, timed, and its figures.

    python benchmarks/child.py NAME CALL [--profile TOP]

NAME is a function of timed.py, CALL its arguments as JSON ({"args": [...], "kwargs": {...}}).
Prints one JSON line: the seconds the call took and the peak RSS (MiB) of this process and
of its workers. With --profile TOP it runs the call under cProfile instead, while a thread
samples the RSS and the pipeline function the main thread is in, and prints the TOP
cumulative entries and the TOP places where memory peaked.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

# Every import the timed code makes, made before the clock starts.
import timed
from peak import own_peak_mib, rss_mib

if TYPE_CHECKING:
    from collections.abc import Callable

_SAMPLE_SECONDS = 0.02


def timed_figures(call: Callable[[], None]) -> dict[str, float]:
    """CALL's seconds, and the peak RSS (MiB) of this process and of its workers."""
    start = time.perf_counter()
    call()
    seconds = time.perf_counter() - start
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"seconds": seconds, "own_mb": own_peak_mib(), "workers_mb": workers}


def profiled(call: Callable[[], None], top: int) -> str:
    """CALL under cProfile: its TOP cumulative entries, then the TOP pipeline RSS peaks."""
    samples: list[tuple[float, str]] = []
    done = threading.Event()
    main = threading.get_ident()  # profiled() runs in the main thread

    def sample() -> None:
        while not done.wait(_SAMPLE_SECONDS):
            frame, where = sys._current_frames().get(main), "?"  # noqa: SLF001 - no public way
            while frame is not None:
                if "/pipeline/" in frame.f_code.co_filename:
                    name = Path(frame.f_code.co_filename).stem
                    where = f"{name}.{frame.f_code.co_name}:{frame.f_lineno}"
                    break
                frame = frame.f_back
            samples.append((rss_mib(), where))

    sampler = threading.Thread(target=sample, daemon=True)
    profile = cProfile.Profile()
    sampler.start()
    profile.enable()
    call()
    profile.disable()
    done.set()
    sampler.join()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(top)
    peaks: dict[str, float] = {}
    for rss, where in samples:
        peaks[where] = max(rss, peaks.get(where, 0.0))
    lines = [text.getvalue(), "main-process RSS peak (MiB) while in, sampled every 20 ms:"]
    lines += [
        f"  {rss:8.0f}  {where}"
        for where, rss in sorted(peaks.items(), key=lambda item: -item[1])[:top]
    ]
    return "\n".join(lines)


def main() -> None:
    """Run the named function of timed.py once; print its figures or its profile."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name", choices=timed.__all__, help="a function of timed.py")
    parser.add_argument("call", type=json.loads, help='its arguments: {"args": [], "kwargs": {}}')
    parser.add_argument("--profile", type=int, metavar="TOP", help="profile it instead")
    options = parser.parse_args()
    function: Callable[..., None] = getattr(timed, options.name)

    def call() -> None:
        function(*options.call["args"], **options.call["kwargs"])

    if options.profile is None:
        print(json.dumps(timed_figures(call)))
    else:
        print(profiled(call, options.profile))


if __name__ == "__main__":
    main()
