"""Ingest Magic: The Gathering ruling dumps into a keyed, deduplicated, historied dataset."""

from typing import TYPE_CHECKING

import pipeline.allocator  # noqa: F401 - first: it chooses Arrow's allocator before pyarrow loads
from pipeline.errors import InputError, LockBusyError, PipelineError, StoreError, UsageError
from pipeline.ingest import IngestOptions, IngestReport, ingest
from pipeline.text.language import detect_language
from pipeline.text.normalize import fold, text_hash

if TYPE_CHECKING:
    from pipeline.publishing.api import Dataset, open_dataset


def __getattr__(name: str) -> object:
    """Import the analysts' API (and pandas) only when it is asked for."""
    if name in {"Dataset", "open_dataset"}:
        from pipeline.publishing import api  # noqa: PLC0415 - keeps the command line's start fast

        return getattr(api, name)
    msg = f"module 'pipeline' has no attribute {name!r}"
    raise AttributeError(msg)


__all__ = [
    "Dataset",
    "IngestOptions",
    "IngestReport",
    "InputError",
    "LockBusyError",
    "PipelineError",
    "StoreError",
    "UsageError",
    "detect_language",
    "fold",
    "ingest",
    "open_dataset",
    "text_hash",
]
