"""The JSON look, as the JSON parsers use it: the shared one of pipeline.decoding.look."""

from __future__ import annotations

from pipeline.decoding.look import READ, Checked, Look, check_limits

__all__ = ["READ", "Checked", "Look", "check_limits"]
