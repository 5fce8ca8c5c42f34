"""A deterministic synthetic corpus of ruling dumps in every layout the pipeline reads.

`python benchmarks/corpus.py OUT --rulings 150000 --seed 1` writes about RULINGS rulings in
files of every layout: plain (ISO and day-first dates), bullet, rules excerpts, Gatherer-like
HTML, MTGJSON set files and Scryfall rulings lists. About 10% of the rulings are German,
Korean or French; texts run 200-600 characters; the same rulings recur across cards and
files, some re-dated.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
from functools import cache
from pathlib import Path

TRANSLATED = 0.1  # share of rulings in another language
_CLAUSES = [
    "If the card has {X} in its mana cost, you must choose 0 as the value of X",
    "the second triggered ability of suspend (the one that lets you cast the card) triggers",
    "you may cast the card without paying its mana cost as the last time counter is removed",
    "timing permissions based on the card's type are ignored",
    "it remains exiled with no time counters on it, and it's no longer suspended",
    "if an effect refers to a suspended card, that means a card that has suspend",
    "the mana value of a spell cast without paying its mana cost is determined by its mana cost",
    "you can't choose to cast it for any alternative costs",
    "if the spell requires any targets, those targets are chosen when the spell is cast",
    "exiling a card with suspend isn't casting that card",
    "this action doesn't use the stack and can't be responded to",
    "cards exiled with suspend are exiled face up",
    "each permanent you control with a time counter on it may get another one",
    "if the first triggered ability is countered, no time counter is removed",
    "any land cards exiled with this ability will remain in exile",
    "the copy enters the battlefield tapped and attacking",
    "if a creature would die this turn, exile it instead",
    "players can't take any other actions until you're done casting the spell",
]
_TRANSLATIONS = {
    "de": [
        "Eine Karte mit Aussetzen ins Exil zu schicken bedeutet nicht, diese Karte zu wirken.",
        "Diese Aktion benutzt nicht den Stapel und kann nicht beantwortet werden.",
        (
            "Falls die zweite ausgelöste Fähigkeit neutralisiert wird, kann die Karte nicht "
            "gewirkt werden."
        ),
        "Sie bleibt ohne Zeitmarken im Exil und ist nicht mehr ausgesetzt.",
    ],
    "ko": [
        "유예를 가진 카드를 추방하는 것은 그 카드를 발동하는 것이 아니다.",
        "이 행동은 스택을 사용하지 않으며 대응할 수 없다.",
        "두 번째 격발능력이 무효화되면 그 카드는 발동할 수 없다.",
        "그 카드는 시간 카운터 없이 추방된 상태로 남으며 더 이상 유예 상태가 아니다.",
    ],
    "fr": [
        "Exiler une carte avec la suspension n'est pas lancer cette carte.",
        "Cette action n'utilise pas la pile et on ne peut pas y répondre.",
        "Si la seconde capacité déclenchée est contrecarrée, la carte ne peut pas être lancée.",
        "Elle reste en exil sans marqueur de temps et elle n'est plus suspendue.",
    ],
}
_WORDS = [
    "Ancient",
    "Rift",
    "Bolt",
    "Vision",
    "Time",
    "Doctor",
    "Lotus",
    "Skirge",
    "Javelin",
    "Sphere",
    "Giant",
    "Faerie",
    "Colossus",
    "Mage",
    "Shaman",
    "Arrows",
    "Recall",
    "Storm",
    "Tunnel",
    "Minotaur",
    "Deserter",
    "Ransacker",
]


def _texts(rng: random.Random, count: int) -> list[str]:
    """COUNT distinct English ruling texts of 200-600 characters."""
    texts = []
    for n in range(count):
        sentences: list[str] = []
        while sum(len(s) for s in sentences) < rng.randint(200, 560):
            clause = rng.choice(_CLAUSES)
            sentences.append(clause[0].upper() + clause[1:] + f" ({n % 97}).")
        texts.append(" ".join(sentences))
    return texts


def _translation(rng: random.Random) -> str:
    lang = rng.choice(sorted(_TRANSLATIONS))
    lines = _TRANSLATIONS[lang]
    return " ".join(rng.choice(lines) for _ in range(rng.randint(3, 6)))


def _card(rng: random.Random, n: int) -> str:
    return f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {n}"


def _rulings(
    rng: random.Random, texts: list[str], count: int, distinct: list[int] | None = None
) -> list[tuple[dt.date, str]]:
    """COUNT dated rulings of TEXTS, a tenth translated.

    DISTINCT (a counter) numbers each text, so that no two rulings of the corpus share one,
    and makes each translation one of another of the card's rulings, word for word
    (_word_for_word), as translated rulings are.
    """
    base = dt.date(2004, 10, 4)
    out = []
    for _ in range(count):
        date = base + dt.timedelta(days=rng.randrange(7000))
        translated = rng.random() < TRANSLATED
        text = _translation(rng) if translated else rng.choice(texts)
        if distinct is not None:
            distinct[0] += 1
            text = f"{rng.choice(texts)} See ruling {distinct[0]}."
        out.append((date, text, translated))
    if distinct is None or count < 2:  # noqa: PLR2004 - a translation needs another ruling
        return [(date, text) for date, text, _ in out]
    made = []
    for n, (date, text, translated) in enumerate(out):
        printed = text
        if translated:
            original = out[(n + 1 + rng.randrange(count - 1)) % count][1]
            printed = _word_for_word(original, rng.choice(sorted(_TRANSLATIONS)))
        made.append((date, printed))
    return made


_TOKEN = re.compile(r"\{[^{}\s]{1,8}\}|[A-Za-z]+|[^A-Za-z\s]+")


def _word_for_word(text: str, lang: str) -> str:
    """TEXT in LANG word for word, in the linker's terms.

    Each English word is the foreign feature whose lexicon entry gives its stem the most
    weight (the shipped lexicon read backwards); symbols, numbers and the rest as printed.
    """
    inverse = _inverse(lang)
    return " ".join(inverse.get(token.lower()[:5], token) for token in _TOKEN.findall(text))


@cache
def _inverse(lang: str) -> dict[str, str]:
    """LANG's lexicon read backwards: each English feature's best foreign one."""
    from pipeline.folding.translate.lexicon import shipped  # noqa: PLC0415 - only for --distinct

    best: dict[str, tuple[float, str]] = {}
    for foreign, options in sorted(shipped()[lang].items()):
        for english, weight in options:
            if weight > best.get(english, (0.0, ""))[0]:
                best[english] = (weight, foreign)
    return {english: foreign for english, (_, foreign) in best.items()}


def _plain(card: str, rulings: list[tuple[dt.date, str]], *, day_first: bool) -> str:
    lines = [card, ""]
    for date, text in rulings:
        printed = f"{date:%d/%m/%Y}" if day_first else date.isoformat()
        lines += [printed, "", text, ""]
    if day_first:  # one unambiguous date settles the document's order
        lines += ["25/12/2020", "", rulings[0][1], ""]
    return "\n".join(lines)


def _bullet(card: str, rulings: list[tuple[dt.date, str]]) -> str:
    lines = [card, ""]
    for date, text in rulings:
        lines += [f"\u2022 {date.isoformat()}", f"  {text}"]
    return "\n".join(lines) + "\n"


def _excerpt(rulings: list[tuple[dt.date, str]]) -> str:
    return "Search\n\n" + "\n\n".join(text for _, text in rulings) + "\n"


def _gatherer(card: str, rulings: list[tuple[dt.date, str]]) -> str:
    rows = "".join(
        f'<tr><td id="x_rulingsRepeater_ctl{n:02d}_rulingDate">{d.month}/{d.day}/{d.year}</td>'
        f'<td id="x_rulingsRepeater_ctl{n:02d}_rulingText">{t}</td></tr>'
        for n, (d, t) in enumerate(rulings)
    )
    return (
        "<!DOCTYPE html><html><head><title>Gatherer</title></head><body>"
        f'<span id="x_SubContentHeader_subtitleDisplay">{card}</span>'
        f"<div class='label'>Card Name:</div><div class='value'>{card}</div>"
        f"<table>{rows}</table></body></html>"
    )


def _mtgjson(cards: list[tuple[str, list[tuple[dt.date, str]]]]) -> str:
    data = {
        "meta": {"version": "5.2.0", "date": "2022-04-25"},
        "data": {"code": "SYN", "cards": [
            {"name": c, "rulings": [{"date": d.isoformat(), "text": t} for d, t in rs]}
            for c, rs in cards
        ]},
    }  # fmt: skip
    return json.dumps(data, ensure_ascii=False)


def _scryfall(cards: list[tuple[str, list[tuple[dt.date, str]]]]) -> str:
    data = [
        {"object": "ruling", "oracle_id": f"oracle-{c}", "source": "wotc",
         "published_at": d.isoformat(), "comment": t}
        for c, rs in cards for d, t in rs
    ]  # fmt: skip
    return json.dumps({"object": "list", "has_more": False, "data": data}, ensure_ascii=False)


def _text_file(kind: str, card: str, rulings: list[tuple[dt.date, str]]) -> str:
    if kind in {"plain", "dmy"}:
        return _plain(card, rulings, day_first=kind == "dmy")
    if kind == "bullet":
        return _bullet(card, rulings)
    return _excerpt(rulings) if kind == "excerpt" else _gatherer(card, rulings)


def generate(out: Path, rulings: int, seed: int = 1, *, distinct: bool = False) -> int:
    """Write a corpus of about RULINGS rulings under OUT; return the number of files.

    DISTINCT makes every ruling's text its own (a number appended), as in a corpus of
    all-new rulings: every English text is then a candidate of its own to link to.
    """
    rng = random.Random(seed)
    texts = _texts(rng, max(200, rulings // 40))
    counter = [0] if distinct else None
    out.mkdir(parents=True, exist_ok=True)
    written, files, n = 0, 0, 0
    while written < rulings:
        kind = rng.choices(
            ["plain", "dmy", "bullet", "excerpt", "html", "mtgjson", "scryfall"],
            weights=[25, 10, 15, 5, 20, 15, 10],
        )[0]
        if kind in {"mtgjson", "scryfall"}:
            cards = [
                (_card(rng, n + i), _rulings(rng, texts, rng.randint(5, 12), counter))
                for i in range(2)
            ]
            n += 2
            body = _mtgjson(cards) if kind == "mtgjson" else _scryfall(cards)
            count, suffix = sum(len(rs) for _, rs in cards), "json"
        else:
            card, rs = _card(rng, n), _rulings(rng, texts, rng.randint(8, 18), counter)
            n += 1
            body = _text_file(kind, card, rs)
            count = len(rs) + (1 if kind == "dmy" else 0)
            suffix = "html" if kind == "html" else "txt"
        folder = out / f"{files // 1000:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"{kind}-{files:06d}.{suffix}").write_text(body, encoding="utf-8")
        written += count
        files += 1
    return files


def scryfall_bulk(
    out: Path, rulings: int, seed: int = 3, prefix: str = "oracle", *, distinct: bool = False
) -> None:
    """Write one Scryfall bulk rulings array of RULINGS rulings (a single large file).

    Seven rulings a card; the cards' oracle ids are PREFIX-0, PREFIX-1 and so on. DISTINCT
    makes every text (and so every text hash) different, as a day's real bulk file nearly is.
    """
    rng = random.Random(seed)
    texts = _texts(rng, max(200, rulings // 40))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for n in range(rulings):
            date, text = _rulings(rng, texts, 1)[0]
            if distinct:
                text += f" See ruling {n} of the file."
            item = {"object": "ruling", "oracle_id": f"{prefix}-{n // 7}", "source": "wotc",
                    "published_at": date.isoformat(), "comment": text}  # fmt: skip
            handle.write(("," if n else "") + json.dumps(item, ensure_ascii=False))
        handle.write("]")


def mtgjson_set(out: Path, rulings: int, seed: int = 4, prefix: str = "New") -> None:
    """Write one MTGJSON set file of RULINGS rulings, ten a card, on cards named PREFIX N."""
    rng = random.Random(seed)
    texts = _texts(rng, max(200, rulings // 40))
    cards = [
        (f"{prefix} {n}", _rulings(rng, texts, min(10, rulings - 10 * n)))
        for n in range((rulings + 9) // 10)
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_mtgjson(cards), encoding="utf-8")


def main() -> None:
    """Command line: write a corpus."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--rulings", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--distinct", action="store_true", help="no two rulings share a text")
    args = parser.parse_args()
    files = generate(args.out, args.rulings, args.seed, distinct=args.distinct)
    print(f"{files} files, about {args.rulings} rulings in {args.out}")


if __name__ == "__main__":
    main()
