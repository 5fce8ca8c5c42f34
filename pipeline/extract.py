"""Turn a parsed document into sightings: resolve dates and card, clean and hash the text."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pipeline.dates import PrintedDate, infer_order, needs_order, parse_date
from pipeline.models import (
    CardOrigin,
    DateOrder,
    Kind,
    Layout,
    ParsedDocument,
    RawDocument,
    Sighting,
)
from pipeline.normalize import card_from_title, clean, has_symbol_gap, text_hash

# Dates after this many days in the future are kept but reported: a clock or typing error.
_FUTURE_SLACK = dt.timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Extraction:
    """The sightings of one document and what is worth reporting about it."""

    sightings: tuple[Sighting, ...]
    warnings: tuple[str, ...]
    ambiguous: bool


def extract(
    doc: RawDocument,
    parsed: ParsedDocument,
    *,
    date_order: DateOrder | None = None,
    today: dt.date | None = None,
) -> Extraction:
    """Build the sightings of DOC; DATE_ORDER is the command line's hint."""
    warnings = list(parsed.warnings)
    printed = {r.date_printed: parse_date(r.date_printed) for r in parsed.rulings if r.date_printed}
    dates = [d for d in printed.values() if d is not None]
    order, ambiguous = _document_order(dates, doc.hints.date_order or date_order, warnings)
    card, printed_name, origin = _card(doc, parsed)
    if card is None and any(r.kind is Kind.RULING for r in parsed.rulings):
        warnings.append(
            f"no card: the title {parsed.title!r} is not a card name and the manifest names none"
        )
    limit = (today or dt.datetime.now(tz=dt.UTC).date()) + _FUTURE_SLACK
    sightings: list[Sighting] = []
    for ruling in parsed.rulings:
        token = printed.get(ruling.date_printed) if ruling.date_printed else None
        effective = token.resolve(order) if token is not None else None
        if token is not None and effective is None and not ambiguous:
            warnings.append(f"invalid date {token.printed!r}: kept as printed, date left empty")
        if token is not None and effective is not None and effective > limit:
            warnings.append(f"date {token.printed!r} is in the future; kept")
        text = clean(ruling.text)
        sightings.append(
            Sighting(
                source_path=doc.path,
                source_sha256=doc.sha256,
                source=doc.hints.source or doc.path,
                layout=parsed.layout,
                position=ruling.position,
                date_printed=ruling.date_printed,
                text_hash=text_hash(text),
                text=text,
                card=card,
                card_printed=printed_name,
                card_origin=origin,
                effective_date=effective,
                kind=ruling.kind,
                date_ambiguous=ambiguous and token is not None and effective is None,
                symbol_gap=has_symbol_gap(ruling.text),
            )
        )
    return Extraction(tuple(sightings), tuple(warnings), ambiguous)


def _document_order(
    dates: list[PrintedDate], hint: DateOrder | None, warnings: list[str]
) -> tuple[DateOrder | None, bool]:
    """Return the document's day/month order and whether it stays ambiguous."""
    order, conflict = infer_order(dates)
    if conflict:
        warnings.append("ambiguous dates: some are only valid day-first, others month-first")
        return None, True
    if order is not None:
        if hint is not None and hint is not order:
            warnings.append(f"the dates can only be read {order}; the hint {hint} is ignored")
        return order, False
    if not needs_order(dates) or hint is not None:
        return hint, False
    warnings.append(
        "ambiguous dates: no date tells day-first from month-first; dates left empty "
        "(give date_order in the manifest or --date-order)"
    )
    return None, True


def _card(
    doc: RawDocument, parsed: ParsedDocument
) -> tuple[str | None, str | None, CardOrigin | None]:
    """Return (card, name as printed, origin); the manifest's card wins over the title."""
    # Headings of rules excerpts are sections, not cards.
    titled = None if parsed.layout is Layout.RULES_EXCERPT else card_from_title(parsed.title)
    if doc.hints.card:
        return doc.hints.card, titled or doc.hints.card, CardOrigin.MANIFEST
    if titled:
        return titled, titled, CardOrigin.TITLE
    return None, None, None
