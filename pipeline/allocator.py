"""Arrow's allocator: jemalloc, handing freed pages straight back to the system.

A run reads Parquet files and builds and drops tables of tens of megabytes between stages
that hold hundreds of thousands of Python objects. Pages an allocator keeps once freed
still count in the process's RSS, and Python's own allocations cannot use them. pyarrow's
default, mimalloc, keeps many; so does jemalloc with Arrow's one-second decay. Measured on
the last day of `benchmarks/daily.py --days 30` (a 120,000-ruling bulk file into a dataset
of 31 runs), two runs each: peak RSS 530 and 539 MiB as before (jemalloc for the run's
own tables, mimalloc for Arrow's internal buffers such as the Parquet reader's), 406 and
409 MiB with jemalloc as Arrow's default pool and no decay.

The default pool is fixed when pyarrow is first imported, so importing this module (the
package does it first) sets it before that, and only then. Where the user names a pool in
ARROW_DEFAULT_MEMORY_POOL, where pyarrow was imported first (a notebook), and off Linux
(pyarrow's wheels elsewhere may lack jemalloc), nothing changes; executor.returning_pool()
still gives the run's own tables jemalloc where it can.
"""

from __future__ import annotations

import os
import sys

_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def prefer_jemalloc() -> None:
    """Make jemalloc without decay Arrow's default pool, if it is still to be chosen."""
    if sys.platform != "linux" or _VARIABLE in os.environ or "pyarrow" in sys.modules:
        return
    os.environ[_VARIABLE] = "jemalloc"
    try:
        import pyarrow as pa  # noqa: PLC0415 - the import that reads the variable

        if pa.default_memory_pool().backend_name == "jemalloc":
            pa.jemalloc_set_decay_ms(0)
    finally:
        del os.environ[_VARIABLE]  # not a choice made for the caller's other programs


prefer_jemalloc()
