"""Compressed files, as the reader opens them: the shared bounded decoder (pipeline.decoding).

The decoder moved to the foundation so that `pipeline fetch` verifies a download with the
very caps the reader applies; this module keeps the reader's names for it.
"""

from __future__ import annotations

from pipeline.decoding.compressed import SUFFIXES, Compression, capped, inflate, plain_name, sniff

__all__ = ["SUFFIXES", "Compression", "capped", "inflate", "plain_name", "sniff"]
