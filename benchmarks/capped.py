"""The small parent of one hostile run: a command under an address-space cap and a time limit.

    python benchmarks/capped.py CAP LIMIT COMMAND...

Runs COMMAND with its address space capped at CAP bytes, waits for it at most LIMIT seconds,
and prints one JSON line: wall seconds, exit code ("killed" past the limit), CPU seconds and
peak RSS (MiB) of the command and its workers, and what it wrote. hostile.py and
hostile_fetch.py start one for each case, so that a regression cannot take the machine down.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def capped(command: list[str], cap: int, limit: float) -> dict[str, object]:
    """Run COMMAND under an address-space cap of CAP bytes for LIMIT seconds; its figures."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.perf_counter()
    code: int | str
    try:
        done = subprocess.run(  # noqa: S603 - the command our caller built
            command,
            capture_output=True,
            text=True,
            timeout=limit,
            check=False,
            # The cap is set in the child before exec; this process starts no threads.
            preexec_fn=limit_memory,
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        code, out, err = "killed", "", f"still running at {limit:g} s"
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": time.perf_counter() - start,
        "code": code,
        "cpu": used.ru_utime + used.ru_stime,
        "rss_mb": used.ru_maxrss / 1024,
        "stdout": out,
        "stderr": err,
    }


if __name__ == "__main__":
    print(json.dumps(capped(sys.argv[3:], int(sys.argv[1]), float(sys.argv[2]))))
