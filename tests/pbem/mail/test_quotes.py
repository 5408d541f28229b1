"""Quote stripping rule by rule, including what must NOT be stripped."""

from __future__ import annotations

import time

import pytest

from pbem.mail.quotes import strip_quoted

OURS = "Cribbage <play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org>"
QUOTE = "> The count is 15.\n> Reply with: play 7♣\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Gmail, top-posted
        (f"play 7c\n\nOn Mon, Jan 1, 2024 at 10:00 AM {OURS} wrote:\n{QUOTE}", "play 7c"),
        # Gmail attribution wrapped over two lines, at different places
        (
            "go\n\nOn Mon, Jan 1, 2024 at 10:00 AM Cribbage <\n"
            f"play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org> wrote:\n{QUOTE}",
            "go",
        ),
        (
            f"go\n\nOn Mon, Jan 1, 2024 at 10:00 AM Cribbage Service\n<p@x.org> wrote:\n{QUOTE}",
            "go",
        ),
        # Apple Mail
        (f"go\n\nOn 1 Jan 2024, at 10:00, {OURS} wrote:\n\n{QUOTE}", "go"),
        # Thunderbird
        (f"count 12\n\nOn 01/01/2024 10:00, Cribbage wrote:\n{QUOTE}", "count 12"),
        # bottom-posted and interleaved
        (f"On 01/01/2024 10:00, Cribbage wrote:\n{QUOTE}\nplay 7c\n", "play 7c"),
        (f"{QUOTE}\ndiscard 5h jd\n\n{QUOTE}\n\n\ngo\n", "discard 5h jd\n\ngo"),
        # quote markers without a space, nested, indented
        (">>The count is 15.\n> >Reply with: go\n   > x\ngo", "go"),
        # Outlook "-----Original Message-----"
        (f"muggins\n\n-----Original Message-----\nFrom: {OURS}\nReply with: go\n", "muggins"),
        # Outlook header block with and without separator, bold from HTML
        (
            f"5♥\n________________________________\nFrom: {OURS}\nSent: Monday\nTo: Bob\n"
            "Subject: x\n\nReply with: play 7♣\n",
            "5♥",
        ),
        (f"5♥\n\nFrom: {OURS}\nDate: Monday\nSubject: x\n\nReply with: play 7♣\n", "5♥"),
        (f"5♥\n\n* * *\n\n**From:** {OURS}\n**Sent:** Monday\n\nReply with: go\n", "5♥"),
        # Android "-------- Original message --------"
        (f"go\n\n-------- Original message --------\nFrom: {OURS}\nReply with: go\n", "go"),
        # history without quote marks after an attribution (Yahoo)
        (f"go\n\nOn Monday, January 1, 2024, 10:00 AM, {OURS} wrote:\n\nReply with: go\n", "go"),
        # signatures and footers
        ("play 7c\n-- \nBob\n", "play 7c"),
        ("play 7c\n--\nBob\n", "play 7c"),
        ("play 7c\n\nSent from my iPhone", "play 7c"),
        ("play 7c\n\nSent from my Galaxy", "play 7c"),
        ("play 7c\nSent from Outlook for Android<https://aka.ms/AAb9ysg>", "play 7c"),
        ("play 7c\n\nGet Outlook for iOS<https://aka.ms/o0ukef>", "play 7c"),
        ("play 7c\n\nSent with Proton Mail secure email.", "play 7c"),
        ("play 7c\n\nVon meinem iPhone gesendet", "play 7c"),
        ("play 7c\n\nEnvoyé de mon iPhone", "play 7c"),
        ("play 7c\n\nEnviado desde mi iPhone", "play 7c"),
        # closings
        ("help\nscore\n\nThanks,\nBob", "help\nscore"),
        ("go\nCheers, Bob", "go"),
        ("go\n\nBest regards,\nBob Smith\n", "go"),
        ("go\n\nViele Grüße\nJürgen", "go"),
        # languages through mail-parser-reply and our own rules
        (f"go\n\nAm Mo., 1. Jan. 2024 um 10:00 Uhr schrieb {OURS}:\n{QUOTE}", "go"),
        (f"go\n\nLe lun. 1 janv. 2024 à 10:00, {OURS} a écrit :\n{QUOTE}", "go"),
        (f"go\n\nEl lun, 1 ene 2024 a las 10:00, Cribbage (<p@x.org>) escribió:\n{QUOTE}", "go"),
        (f"go\n\nIl giorno lun 1 gen 2024 alle ore 10:00 {OURS} ha scritto:\n{QUOTE}", "go"),
        (f"go\n\nOp ma 1 jan 2024 om 10:00 schreef {OURS}:\n{QUOTE}", "go"),
        (f"go\n\nDen mån 1 jan. 2024 kl 10:00 skrev {OURS}:\n{QUOTE}", "go"),
        (f"go\n\n2024年1月1日(月) 10:00 Cribbage <p@x.org>:\n{QUOTE}", "go"),
        (f"go\n\n-----Ursprüngliche Nachricht-----\nVon: {OURS}\nReply with: go\n", "go"),
        (f"go\n\nVon: {OURS}\nGesendet: Montag\nAn: Bob\nBetreff: x\n\nReply with: go", "go"),
        (f"go\n\nDe : {OURS}\nEnvoyé : lundi\nÀ : Bob\nObjet : x\n\nReply with: go", "go"),
    ],
)
def test_strip(text: str, expected: str) -> None:
    assert strip_quoted(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "play 7c",
        "discard 5h jd\nplay 7c",
        "5♥",
        "5♥️",
        "- play 7c\n- go",  # a list is not a signature
        "On my turn I play 7c",
        "On second thought, play 7c",
        "I wrote: play 7c",
        "From now on I play 7c",
        "Thanks",  # a closing alone is all the player wrote; keep it
        "go\nThanks for the game, see you tomorrow and good luck with the next hand",
        "count 12\nthe count is 12: 15 two and a pair",
        "muggins!\nYou missed 15-2",
    ],
)
def test_keeps_what_the_player_wrote(text: str) -> None:
    assert strip_quoted(text) == text


def test_attribution_without_date_or_address_is_text_when_nothing_is_quoted() -> None:
    assert strip_quoted("Bob wrote:\nplay 7c") == "Bob wrote:\nplay 7c"


def test_attribution_without_date_is_dropped_before_a_quote() -> None:
    assert strip_quoted(f"Cribbage wrote:\n{QUOTE}\ngo") == "go"


def test_blank_lines_collapse_and_ends_are_trimmed() -> None:
    assert strip_quoted("\n\n  \nplay 7c  \n\n\n\ngo\n\n") == "play 7c\n\ngo"


def test_crlf_and_invisible_characters() -> None:
    assert strip_quoted("\ufeffplay\u00a07c\u200b\r\n\r\n> quoted\r\n") == "play 7c"


def test_only_history_gives_empty_text() -> None:
    assert strip_quoted(f"On Mon, Jan 1, 2024 at 10:00 AM {OURS} wrote:\n{QUOTE}") == ""
    assert strip_quoted("") == ""


def test_pathological_input_is_fast() -> None:
    nasty = ("On " + "x " * 5000 + "\n") * 50 + "From: a\n" * 2000 + ("> " * 3000 + "\n") * 50
    start = time.perf_counter()
    strip_quoted(nasty)
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize("opener", ["On", "Am", "Il", "Op", "Dne", "Dnia", "2024年1月1日(月)"])
@pytest.mark.parametrize("ending", [" :", " xha scritto :", " 年 :", " napsal :", " wrote:"])
def test_lines_shaped_like_attributions_are_fast(opener: str, ending: str) -> None:
    text = "\n".join(f"{opener} " + "a " * 90 + ending for _ in range(3000))
    start = time.perf_counter()
    strip_quoted(text)
    assert time.perf_counter() - start < 2


def test_a_command_right_above_an_attribution_is_kept() -> None:
    # HTML converted to text puts the attribution on the very next line
    text = f"count 12\nOn 01/01/2024 10:00, Cribbage wrote:\n{QUOTE}"
    assert strip_quoted(text) == "count 12"
    text = f"play 7c\ngo\nOn Mon, Jan 1, 2024 at 10:00 AM {OURS} wrote:\n{QUOTE}"
    assert strip_quoted(text) == "play 7c\ngo"
