"""``printable``: a tool's text as the CLI prints it, bounded and with no control
characters."""

from __future__ import annotations

import re
import time
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from plansmith.cli._printable import printable

_UNSAFE = frozenset({"Cc", "Cs", "Zl", "Zp"})
_NOTE = re.compile(r"\.\.\. \([\d,]+ more characters?(; .*)?\)\Z")


def _unsafe(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in _UNSAFE]


@given(st.text(), st.integers(min_value=0, max_value=400), st.integers(min_value=1, max_value=4))
def test_printable_text_has_no_control_character_but_the_newlines_of_the_lines_kept(
    text: str, most: int, lines: int
) -> None:
    shown = printable(text, most, lines=lines)
    assert [c for c in _unsafe(shown) if c != "\n"] == []
    assert shown.count("\n") <= lines - 1
    assert "\x1b" not in shown


@given(st.text(), st.integers(min_value=0, max_value=400), st.integers(min_value=1, max_value=4))
def test_printable_text_is_at_most_its_bound_and_a_note(text: str, most: int, lines: int) -> None:
    shown = printable(text, most, lines=lines, whole="see show --json")
    note = _NOTE.search(shown)
    kept = shown[: note.start()] if note else shown
    assert len(kept) <= most
    assert note is not None or len(text) <= len(kept)  # nothing left out: all is there


@given(st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))), st.integers(0, 400))
def test_a_printable_text_is_shown_as_it_is_up_to_the_bound(text: str, most: int) -> None:
    shown = printable(text, most)
    assert shown.startswith(text[:most])
    if len(text) <= most:
        assert shown == text
    else:
        left_out = len(text) - most
        assert shown == f"{text[:most]}... ({left_out:,} more character{'s' * (left_out > 1)})"


def test_escape_codes_are_shown_escaped_and_the_cut_says_how_much_is_left_out() -> None:
    assert printable("boom\x1b[2J\x1b[32mok\x1b[0m") == "boom\\x1b[2J\\x1b[32mok\\x1b[0m"
    assert printable("a\tb\rc\x7f\x9b\u2028\ud800") == "a\\tb\\rc\\x7f\\x9b\\u2028\\ud800"
    assert printable("first\nsecond") == "first... (7 more characters)"
    assert printable("one\ntwo\nthree", lines=2) == "one\ntwo... (6 more characters)"
    assert printable("x" * 10, 4, whole="show --json") == (
        "xxxx... (6 more characters; show --json)"
    )
    # an escape does not fit in what is left: the character is left out whole, not cut
    assert printable("abc\x1b", 5) == "abc... (1 more character)"


def test_printing_a_megabyte_costs_what_printing_a_line_does() -> None:
    began = time.monotonic()
    shown = printable("7" * 2_000_000 + "\x1b[2J")
    assert time.monotonic() - began < 1.0  # well under: the text is not walked
    assert shown.endswith("... (1,999,704 more characters)")
