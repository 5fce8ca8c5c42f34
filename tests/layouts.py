"""Builders of small ruling files in each layout, for the hostile-input tests."""

from __future__ import annotations


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
