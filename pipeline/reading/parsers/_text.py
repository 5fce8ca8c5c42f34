"""Line helpers the text layouts share."""

from __future__ import annotations

from pipeline.text.dates import parse_date

# A ruling can be long, but a single line past this is a blob, not a dump (a minified
# HTML page stays well under it).
MAX_LINE = 1_000_000


def lines_of(text: str) -> list[str]:
    """Split text into lines without their line ends."""
    return text.split("\n")


def is_date_line(line: str) -> bool:
    """Tell whether a line holds nothing but a date."""
    return bool(line.strip()) and parse_date(line) is not None


def join_paragraph(lines: list[str]) -> str:
    """Join a paragraph's lines with single spaces, keeping the inner spacing of each line."""
    return " ".join(part.strip() for part in lines if part.strip())


def title_before(lines: list[str], stop: int) -> tuple[str | None, list[str]]:
    """Return the first non-blank line before index STOP and the other lines there."""
    before = [line for line in lines[:stop] if line.strip()]
    if not before:
        return None, []
    return before[0].strip(), before[1:]
