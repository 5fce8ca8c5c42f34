"""A process's own peak memory: what the child processes of measure.py and sidebyside.py report.

Its imports are few and small, so that importing it adds next to nothing to the peak.
"""

from __future__ import annotations

import contextlib
import resource
from pathlib import Path


def own_peak_mib() -> float:
    """The peak RSS in MiB of the process itself.

    VmHWM (Linux) is its own high-water mark; ru_maxrss is not: Linux carries it across exec,
    so a child reports at least the RSS its parent had when starting it (a daily.py holding
    its bulk file: some 460 MiB).
    """
    # Not Linux: ru_maxrss is the best there is.
    with contextlib.suppress(OSError), Path("/proc/self/status").open(encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib() -> float:
    """The RSS in MiB of the process now (0 where /proc is not there)."""
    with contextlib.suppress(OSError), Path("/proc/self/status").open(encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0
