"""Language detection: scripts, profiles, the tie-breaker, `und`, real-text accuracy."""

from __future__ import annotations

import collections
import functools
import json
import os
import subprocess
import sys
import time

import pyarrow as pa
import pytest
from conftest import FIXTURES, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.reading import executor
from pipeline.reading.sightings import undeclared_texts
from pipeline.text import language
from pipeline.text.language import (
    UNDETERMINED,
    detect_language,
    detect_many,
    forget,
    remember,
    settle,
    settle_many,
)

LANGUAGES = {"en", "de", "fr", "it", "es", "pt", "ja", "ko", "ru", "zh", UNDETERMINED}
# Real printed texts of sets the profiles were not built from (benchmarks/langeval.py).
SAMPLE = [
    json.loads(line)
    for line in (FIXTURES / "language" / "held-out-sample.jsonl").read_text("utf-8").splitlines()
]


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
        ("以暫停放逐牌不算施放該牌。", "zh"),
        ("{1}, {T}: добавьте {G}{U}.", "ru"),
        ("{1}, {T}: Guadagni un punto vita.", "it"),
        ("Whenever Тиграна attacks, put a +1/+1 counter on it.", "en"),
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
        (
            "Il giocatore non può lanciare questa carta finché è in esilio con la sospensione.",
            "it",
        ),
        ("El hechizo no se puede lanzar mientras la carta esté en el exilio.", "es"),
        ("Você pode conjurar esta mágica a qualquer momento em que puder conjurar.", "pt"),
    ],
)
def test_detects_language(text: str, lang: str) -> None:
    """Scripts decide CJK and Cyrillic; the profiles the Latin languages; symbols are noise."""
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    "text",
    ["", "1234 5678", "{2}{U}{U}", "{1}{W}, {T}:", "+1/+1", "702.62a", "—", "X: +X/+0."],
)
def test_too_short_to_say_is_und(text: str) -> None:
    """What carries no language (symbols, numbers, rule numbers, one letter) is `und`."""
    assert detect_language(text) == UNDETERMINED


def test_declared_language_wins() -> None:
    """A source that declares its language is believed."""
    assert detect_language("Oui.", declared="en") == "en"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_answers_only_in_the_ten_languages(text: str) -> None:
    """Whatever the input, the answer is one of the ten printed languages or `und`."""
    assert detect_language(text) in LANGUAGES


def test_accuracy_floor_on_real_held_out_text() -> None:
    """On real printed texts of held-out sets: >= 99.5% right, <= 0.3% wrong, each >= 98.5%."""
    answers = detect_many([item["text"] for item in SAMPLE])
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for item, answer in zip(SAMPLE, answers, strict=True):
        verdict = "right" if answer == item["lang"] else "und" if answer == UNDETERMINED else "x"
        per[item["lang"]][verdict] += 1
    total = sum((counts for counts in per.values()), collections.Counter[str]())
    assert set(per) == LANGUAGES - {UNDETERMINED}
    assert total["right"] >= 0.995 * len(SAMPLE)
    assert total["x"] <= 0.003 * len(SAMPLE)
    for lang, counts in per.items():
        assert counts["right"] >= 0.985 * sum(counts.values()), lang


def test_a_batch_answers_as_one_text_at_a_time() -> None:
    """A text's answer does not depend on the batch it came in, nor on its order there."""
    texts = [item["text"] for item in SAMPLE[::7]]
    one_by_one = [settle(text) for text in texts]
    assert settle_many(texts) == one_by_one
    assert settle_many(texts[::-1]) == one_by_one[::-1]


_LATIN_WORDS = st.lists(
    st.text(
        alphabet=st.sampled_from("aeiouszchnt'\u00e0\u00e9\u00f1\u00f6\u00df\u0153"), min_size=1
    ),
    max_size=30,
)


@functools.cache
def _latin_profile() -> dict[str, tuple[float, ...]]:
    return language._load()["latin"]


@pytest.mark.slow
@settings(deadline=None)  # the first example loads the profile: no deadline on a loaded machine
@given(words=_LATIN_WORDS)
def test_words_are_scored_as_the_sum_of_their_n_grams(words: list[str]) -> None:
    """Scoring words at once in numpy gives each the sum of its word_grams() in the profile."""
    profile = _latin_profile()
    expected = [
        [sum(column) for column in zip(*[profile[g] for g in language.word_grams(word)
                                          if g in profile], strict=True)] or [0.0] * 6
        for word in words
    ]  # fmt: skip
    got = language._word_scores(words)
    assert got.shape == (len(words), len(language.LATIN))
    assert [value for row in got.tolist() for value in row] == pytest.approx(
        [value for row in expected for value in row], abs=1e-9
    )


@pytest.mark.slow
def test_detection_is_deterministic_across_processes() -> None:
    """A fresh process (empty caches, another order) gives every text the same answer."""
    texts = [item["text"] for item in SAMPLE[::5]]
    code = (
        "import json, sys\nfrom pipeline.text.language import detect_many\n"
        "texts = json.load(sys.stdin)\nprint(json.dumps(detect_many(texts[::-1])[::-1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert json.loads(done.stdout) == detect_many(texts)


def test_only_undeclared_texts_are_detected_each_once() -> None:
    """A batch's texts whose source declared no language, each once."""
    texts = ["Cards exiled with suspend are exiled face up.", "Oui.", "Yes.", "Haste"]
    table = pa.table({"text": [*texts, texts[0]], "lang": [None, "fr", None, None, None]})
    assert sorted(undeclared_texts(table)) == sorted(set(texts) - {"Oui."})


@pytest.mark.parametrize("workers", [1, 2])
def test_language_jobs_give_the_detectors_answers(
    workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detected on worker processes or here, in tasks of any size: detect_many's answers.

    A text submitted again is not detected again; a text langdetect must decide ("Haste")
    is decided on the workers too, so the main process has nothing left to detect.
    """
    monkeypatch.setattr(executor, "DETECT_TEXTS", 3)
    texts = [row["text"] for row in SAMPLE[:20]] + ["Haste"]
    with executor.LanguageJobs(workers) as jobs:
        jobs.submit(texts[:12])
        jobs.submit(texts)  # the first twelve again, and the rest
        found = jobs.results()
    assert list(found) == texts  # each once, in the order submitted
    assert list(found.values()) == detect_many(texts)
    remember(found)
    assert detect_language("Haste") == found["Haste"]
    forget()


_PARENT = os.getpid()


def _dies_in_a_worker(texts: list[str]) -> list[str]:
    """detect_many() here; in a worker process, the worker dies."""
    if os.getpid() != _PARENT:
        os._exit(1)
    return detect_many(texts)


def test_language_jobs_outlive_a_dying_detection_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detection process that dies costs time, not answers: its texts are detected here."""
    monkeypatch.setattr(executor, "detect_many", _dies_in_a_worker)
    monkeypatch.setattr(executor, "DETECT_TEXTS", 4)
    texts = [row["text"] for row in SAMPLE[:10]]
    with executor.LanguageJobs(2) as jobs:
        jobs.submit(texts)
        found = jobs.results()
    assert list(found) == texts
    assert list(found.values()) == detect_many(texts)


def test_one_worker_starts_no_detection_process() -> None:
    """With one worker every text is detected here: start() forks nothing, however many files."""
    with executor.LanguageJobs(1) as jobs:
        jobs.start(10 * executor.BATCH_FILES)
        jobs.submit(["Cards exiled with suspend are exiled face up."])
        assert jobs._pool is None  # the process pool is what is checked
        assert jobs.results() == {"Cards exiled with suspend are exiled face up.": "en"}


_HERE: list[list[str]] = []


def _slow_in_a_worker(texts: list[str]) -> list[str]:
    """detect_many(), recorded when called here; a worker process takes 0.3 s over it."""
    if os.getpid() == _PARENT:
        _HERE.append(texts)
    else:
        time.sleep(0.3)
    return detect_many(texts)


def test_tasks_not_started_are_detected_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The main process takes back the tasks no process has started, from the last one on.

    One detection process (two workers) holds at most three tasks (one it detects, two
    queued to it); of six, at least the last three are taken back, and the answers still
    come in the order submitted.
    """
    monkeypatch.setattr(executor, "detect_many", _slow_in_a_worker)
    monkeypatch.setattr(executor, "DETECT_TEXTS", 2)
    texts = [row["text"] for row in SAMPLE[:13]]
    _HERE.clear()
    with executor.LanguageJobs(2) as jobs:
        jobs.submit(texts)
        found = jobs.results()
    assert list(found) == texts
    assert list(found.values()) == detect_many(texts)
    tasks = [texts[n : n + 2] for n in range(0, 12, 2)]
    rest, *back = _HERE
    assert rest == texts[12:]  # the texts after the last whole task, first
    assert len(back) >= 3
    assert back == tasks[::-1][: len(back)]  # then tasks 6, 5, 4… from the last one


def _niceness(texts: list[str]) -> list[str]:
    return [str(os.nice(0))] * len(texts)


def test_detection_processes_run_nicer_than_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detection yields the CPU to the scan: its processes are nicer than this one."""
    monkeypatch.setattr(executor, "detect_many", _niceness)
    monkeypatch.setattr(executor, "DETECT_TEXTS", 1)
    with executor.LanguageJobs(2) as jobs:
        jobs.start(2 * executor.BATCH_FILES)
        jobs.submit(["Haste"])
        assert jobs._tasks  # handed over, not left for this process
        found = jobs.results()
    assert int(found["Haste"]) > os.nice(0) or os.nice(0) == 19
