"""A ruling change is explained by the rules as the release in force at its date titles them.

A section's number is reused over the years (with every release of an archive read, 702.62
was "Aura Swap" in an old one and is "Suspend" since): the keyword that links a rule change
to the ruling changes it explains is its section's title in the release that changed it.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from pipeline import ingest, open_dataset
from pipeline.publishing.dataset import load_changeset
from pipeline.publishing.site_data import load_site
from pipeline.publishing.titles import RuleTitles

if TYPE_CHECKING:
    from pathlib import Path

# 702.62a of the real 2023-11-17 and 2024-02-06 releases (../shared/realdata/comprules), cut
# after the words the 2024 release changed ("play it" became "you may play it").
SUSPEND_2023 = (
    "Suspend is a keyword that represents three abilities. The first is a static ability that"
    " functions while the card with suspend is in a player\u2019s hand. \u201cWhen the last"
    " time counter is removed from this card, if it\u2019s exiled, play it without paying its"
    " mana cost if able.\u201d"
)
SUSPEND_2024 = SUSPEND_2023.replace("exiled, play it", "exiled, you may play it")
# An old release's section 702.62, in the shape of the releases that numbered Aura Swap so.
AURA_SWAP = (
    "Aura swap is an activated ability of some Aura cards. \u201cAura swap [cost]\u201d means"
    " \u201c[Cost]: You may exchange this permanent with an Aura card in your hand.\u201d"
)
EXPLAINED = "702.62a (amended, effective 2024-02-02)"


def _release(date: str, number: str, title: str, rule: str) -> str:
    """A release in the shape of the real ones: title, date, contents, a section, glossary."""
    section = number.split(".", maxsplit=1)[0]
    return (
        "Magic: The Gathering Comprehensive Rules\n\n"
        f"These rules are effective as of {date}.\n\nContents\n\n5. Additional Rules\n"
        f"{section}. Keyword Abilities\nGlossary\nCredits\n\n5. Additional Rules\n\n"
        f"{section}. Keyword Abilities\n\n{number}. {title}\n\n{number}a {rule}\n\n"
        f"Glossary\n\n{title}\nA keyword ability. See rule {number}.\n\nCredits\n\n"
        "Rules Manager: Eli Shiffrin\n"
    )


def _ruling(date: str, text: str) -> str:
    return f"Rift Bolt\n\n{date}\n\n{text}\n"


def _run(raw: Path, out: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (raw / name).write_text(text, encoding="utf-8")
    ingest([raw], out=out)


def test_a_ruling_change_is_explained_by_the_rule_in_force(tmp_path: Path) -> None:
    """2024's suspend ruling is explained by 702.62a, whose section was "Suspend" then.

    An archive read in one run: 2006 (suspend as 502.59), 2009 (702.62 is Aura Swap), 2023
    (702.62 is Suspend); then 2024 and the ruling's new words. The title "Suspend" is dated
    by its first release, 2006, "Aura Swap" by 2009: the last title stored for 702.62 is
    Aura Swap, which no suspend ruling names. Then a 2025 release (synthetic) in which
    702.62 is Aura Swap again: the number's current title is not the 2024 one either.
    """
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    _run(raw, out, {
        "cr-2006-10-01.txt": _release("October 1, 2006", "502.59", "Suspend", SUSPEND_2023),
        "cr-2009-10-01.txt": _release("October 1, 2009", "702.62", "Aura Swap", AURA_SWAP),
        "cr-2023-11-17.txt": _release("November 17, 2023", "702.62", "Suspend", SUSPEND_2023),
        "rift.txt": _ruling("2021-03-19", "Cards exiled with suspend are exiled face up."),
    })  # fmt: skip
    _run(raw, out, {
        "cr-2024-02-02.txt": _release("February 2, 2024", "702.62", "Suspend", SUSPEND_2024),
        "rift.txt": _ruling("2024-02-02", "Cards exiled with suspend are exiled face up, always."),
    })  # fmt: skip
    # A later release gives the number to another section again: the titles in force then
    # are no more the 2024 change's than the last ones of the archive were.
    _run(raw, out, {
        "cr-2025-08-01.txt": _release("August 1, 2025", "702.62", "Aura Swap", AURA_SWAP),
    })  # fmt: skip
    changes = load_changeset(out, run=2)
    [ruling] = [g for g in changes.groups if not g.is_rule]
    assert ruling.explained_by == (EXPLAINED,)
    frame = open_dataset(out).changes(run=2)  # the API's column
    reasons = frame.loc[frame["kind"] == "ruling", "explained_by"]
    assert [list(r) for r in reasons] == [[EXPLAINED]]
    [site_run] = [r for r in load_site(out).runs if r.run == 2]  # the site's run page
    assert [g.explained_by for g in site_run.changeset.groups if not g.is_rule] == [(EXPLAINED,)]


def test_a_title_is_the_one_of_the_release_in_force() -> None:
    """The latest release on or before the date that holds the number names it."""
    titles = RuleTitles(
        {
            dt.date(2006, 10, 1): {"702.62": "Aura Swap"},
            dt.date(2009, 10, 1): {"702.62": "Suspend", "702.63": "Vanishing"},
            dt.date(2024, 2, 2): {"702.62": "Suspend"},
        }
    )
    assert titles.at("702.62", dt.date(2006, 10, 1)) == "Aura Swap"
    assert titles.at("702.62", dt.date(2009, 9, 30)) == "Aura Swap"
    assert titles.at("702.62", dt.date(2025, 1, 1)) == "Suspend"
    assert titles.at("702.62", dt.date(2006, 9, 30)) is None  # before every release
    assert titles.at("702.63", dt.date(2025, 1, 1)) == "Vanishing"  # gone: its last title
    assert dict(titles) == {"702.62": "Suspend", "702.63": "Vanishing"}  # the latest of each
