"""Language detection: scripts, the English guard, langdetect, declared languages."""

from __future__ import annotations

import pytest

from pipeline.language import UNDETERMINED, detect_language


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Yes.", "en"),
        ("No.", "en"),
        ("Cards exiled with suspend are exiled face up.", "en"),
        ("See https://magic.wizards.com/en/news for the update.", "en"),
        ("유예를 가진 카드를 추방하는 것은 그 카드를 발동하는 것이 아니다.", "ko"),
        ("保留カードを追放することは、そのカードを唱えることではない。", "ja"),
        ("以暂停放逐牌不算施放该牌。", "zh"),
        (
            (
                "Eine Karte mit Aussetzen ins Exil zu schicken bedeutet nicht, diese Karte zu "
                "wirken. Diese Aktion benutzt nicht den Stapel."
            ),
            "de",
        ),
        (
            (
                "Exiler une carte avec la suspension n'est pas la lancer. Cette action "
                "n'utilise pas la pile et on ne peut pas y répondre."
            ),
            "fr",
        ),
        ("Qwx.", UNDETERMINED),
        ("Die.", UNDETERMINED),
        (
            "Il giocatore non può lanciare questa carta finché è in esilio con la sospensione.",
            "it",
        ),
        ("El hechizo no se puede lanzar mientras la carta esté en el exilio.", "es"),
        ("1234 5678", UNDETERMINED),
    ],
)
def test_detects_language(text: str, lang: str) -> None:
    """Scripts decide CJK; clear English is caught before the model; short text is und."""
    assert detect_language(text) == lang


def test_declared_language_wins() -> None:
    """A source that declares its language is believed."""
    assert detect_language("Oui.", declared="en") == "en"


def test_detection_is_deterministic() -> None:
    """The same text always gets the same code (langdetect is seeded)."""
    text = "Wenn der Zauberspruch Ziele erfordert, werden diese gewählt, wenn er gewirkt wird."
    assert len({detect_language(text + " " * i) for i in range(5)}) == 1
