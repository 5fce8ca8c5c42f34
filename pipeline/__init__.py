"""Ingest Magic: The Gathering ruling dumps into a keyed, deduplicated, historied dataset."""

from pipeline.errors import InputError, LockBusyError, PipelineError, StoreError, UsageError
from pipeline.ingest import IngestReport, ingest
from pipeline.language import detect_language
from pipeline.normalize import fold, text_hash

__all__ = [
    "IngestReport",
    "InputError",
    "LockBusyError",
    "PipelineError",
    "StoreError",
    "UsageError",
    "detect_language",
    "fold",
    "ingest",
    "text_hash",
]
