"""Turn a parsed document into sightings: resolve dates and card, clean and hash the text."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pipeline.limits import Limits, over
from pipeline.models import (
    CardOrigin,
    DateOrder,
    Kind,
    Layout,
    ParsedDocument,
    RawDocument,
    Sighting,
)
from pipeline.reading.asof import undated
from pipeline.text.dates import PrintedDate, infer_order, needs_order, parse_date
from pipeline.text.normalize import card_from_title, card_name

if TYPE_CHECKING:
    from collections.abc import Iterator

# Dates after this many days in the future are kept but reported: a clock or typing error.
_FUTURE_SLACK = dt.timedelta(days=1)
# How the warning of a document whose dates stay open begins (the run's summary lists those
# documents on their own, by this).
AMBIGUOUS = "ambiguous dates: "


@dataclass(slots=True)
class Extraction:
    """The sightings of one document (lazy) and what is worth reporting about it.

    `warnings` and `kinds` (rows per kind) are complete once `sightings` has been consumed.
    """

    sightings: Iterator[Sighting]
    ambiguous: bool
    warnings: list[str] = field(default_factory=list)
    kinds: Counter[Kind] = field(default_factory=Counter)

    @property
    def count(self) -> int:
        """Rows extracted so far."""
        return sum(self.kinds.values())


def extract(
    doc: RawDocument,
    parsed: ParsedDocument,
    *,
    date_order: DateOrder | None = None,
    today: dt.date | None = None,
    limits: Limits | None = None,
) -> Extraction:
    """Build the sightings of DOC; DATE_ORDER is the command line's hint.

    A ruling longer than the limit (LIMITS, default Limits()) is skipped with a warning:
    the rest of its document is sound.

    Numeric dates need the whole document to settle their day/month order, so that
    inference runs over documents whose rulings are a sequence (text layouts); streamed
    layouts print unambiguous dates.
    """
    warnings = parsed.warnings
    printed: dict[str, PrintedDate | None] = {}
    if isinstance(parsed.rulings, Sequence):
        printed = {
            r.date_printed: parse_date(r.date_printed) for r in parsed.rulings if r.date_printed
        }
    dates = [d for d in printed.values() if d is not None]
    hint = doc.hints.date_order or parsed.date_order or date_order
    order, ambiguous = _document_order(dates, hint, warnings)
    card, printed_name, origin = _card(doc, parsed)
    result = Extraction(iter(()), ambiguous, warnings)
    limit = (today or dt.datetime.now(tz=dt.UTC).date()) + _FUTURE_SLACK
    path = doc.path
    default_source = undated(doc.name or path)
    longest = (limits or Limits()).ruling

    def rows() -> Iterator[Sighting]:
        for ruling in parsed.rulings:
            if len(ruling.text) > longest:
                found = f"ruling {ruling.position} has {len(ruling.text):,} characters; skipped"
                warnings.append(over("ruling", found, longest))
                continue
            token = printed.get(ruling.date_printed) if ruling.date_printed else None
            if ruling.date_printed and ruling.date_printed not in printed:
                token = printed[ruling.date_printed] = parse_date(ruling.date_printed)
            effective = token.resolve(order) if token is not None else None
            if ruling.date_printed and token is None:
                warnings.append(f"unreadable date {ruling.date_printed!r}: date left empty")
            elif token is not None and effective is None and not ambiguous:
                warnings.append(f"invalid date {token.printed!r}: kept as printed, date left empty")
            if token is not None and effective is not None and effective > limit:
                warnings.append(f"date {token.printed!r} is in the future; kept")
            row_card, row_origin = (ruling.card, CardOrigin.DATA) if ruling.card else (card, origin)
            row_card = card_name(row_card) if row_card else row_card
            result.kinds[ruling.kind] += 1
            yield Sighting(
                source_path=path,
                source_sha256=doc.sha256,
                source=doc.hints.source or ruling.source or parsed.source or default_source,
                layout=parsed.layout,
                position=ruling.position,
                date_printed=ruling.date_printed,
                text=ruling.text,
                card=row_card,
                card_printed=ruling.card or printed_name,
                card_origin=row_origin,
                effective_date=effective,
                kind=ruling.kind,
                date_ambiguous=ambiguous and token is not None and effective is None,
                lang=ruling.lang,
                oracle_id=ruling.oracle_id,
                rule_id=ruling.rule_id,
                fetched_at=doc.hints.fetched_at,
                set_code=ruling.set_code,
                set_released=ruling.set_released,
            )

    result.sightings = rows()
    return result


def _document_order(
    dates: list[PrintedDate], hint: DateOrder | None, warnings: list[str]
) -> tuple[DateOrder | None, bool]:
    """Return the document's day/month order and whether it stays ambiguous."""
    order, conflict = infer_order(dates)
    if conflict:
        warnings.append(AMBIGUOUS + "some are only valid day-first, others month-first")
        return None, True
    if order is not None:
        if hint is not None and hint is not order:
            warnings.append(f"the dates can only be read {order}; the hint {hint} is ignored")
        return order, False
    if not needs_order(dates) or hint is not None:
        return hint, False
    warnings.append(
        AMBIGUOUS + "no date tells day-first from month-first; dates left empty "
        "(give date_order in the manifest or --date-order)"
    )
    return None, True


def _card(
    doc: RawDocument, parsed: ParsedDocument
) -> tuple[str | None, str | None, CardOrigin | None]:
    """Return (card, name as printed, origin); the manifest's card wins over the title."""
    # Headings of rules excerpts and rules documents are sections, not cards.
    rules = parsed.layout in {Layout.RULES_EXCERPT, Layout.COMPREHENSIVE_RULES}
    titled = None if rules else card_from_title(parsed.title)
    if doc.hints.card:
        return doc.hints.card, titled or doc.hints.card, CardOrigin.MANIFEST
    if titled:
        return titled, titled, CardOrigin.TITLE
    return None, None, None
