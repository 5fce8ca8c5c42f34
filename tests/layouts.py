"""Builders of small ruling files in each layout, for the hostile-input tests."""

from __future__ import annotations

import textwrap


def ruling(comment: str, extra: str = "") -> str:
    """A Scryfall ruling object; EXTRA is appended inside it (`, "key": value`)."""
    return (
        '{"object": "ruling", "oracle_id": "5c6a5d0b", "source": "wotc", '
        f'"published_at": "2024-02-02", "comment": "{comment}"{extra}}}'
    )


def scryfall(data: str) -> bytes:
    """A Scryfall `/rulings` list object whose `data` is DATA."""
    return f'{{"object": "list", "has_more": false, "data": {data}}}'.encode()


def rule(text: str, extra: str = "") -> str:
    """An MTGJSON ruling object; EXTRA is appended inside it."""
    return f'{{"date": "2024-02-02", "text": "{text}"{extra}}}'


def mtgjson(rulings: str) -> bytes:
    """An MTGJSON set file of one card, Rift Bolt, whose `rulings` is RULINGS."""
    cards = f'[{{"name": "Rift Bolt", "rulings": {rulings}}}]'
    return f'{{"meta": {{"version": "5"}}, "data": {{"code": "TSP", "cards": {cards}}}}}'.encode()


def gatherer(cells: str, wrap: int = 0) -> bytes:
    """A Gatherer page of Rift Bolt, one ruling row per "|"-separated cell, WRAP divs deep."""
    row = (
        '<tr><td id="r_ctl0{n}_rulingDate">2/2/2024</td><td id="r_ctl0{n}_rulingText">{t}</td></tr>'
    )
    rows = "".join(row.format(n=n, t=text) for n, text in enumerate(cells.split("|")))
    return (
        '<html><body><span id="h_SubContentHeader_subtitleDisplay">Rift Bolt</span>\n'
        + "<div>\n" * wrap
        + f"<table>{rows}</table>"
        + "</div>\n" * wrap
        + "</body></html>"
    ).encode()


def hard_wrap(text: str, width: int) -> str:
    """TEXT as the 2003-2004 Comprehensive Rules print it: every line cut at WIDTH columns.

    A line's words go on over the next lines, unindented (an indented line keeps its
    indentation on its first line only); blank lines and line ends (CRLF) stay as they are.
    Words are never broken, not even at hyphens, so joining the lines with spaces gives
    the text back.
    """
    out: list[str] = []
    for line in text.split("\n"):
        end = "\r" if line.endswith("\r") else ""
        body = line.removesuffix("\r")
        words = body.lstrip()
        if len(body) <= width or not words:
            out.append(line)
            continue
        indent = body[: len(body) - len(words)]
        parts = textwrap.wrap(
            words, width, initial_indent=indent, break_long_words=False, break_on_hyphens=False
        )
        out += [part + end for part in parts]
    return "\n".join(out)
