"""Values in evidence text: dates, versions and quantities, found with their spans."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from plansmith.domains.research.verify import (
    DateValue,
    entity_key,
    find_dates,
    find_entities,
    find_quantities,
    find_versions,
    parse_date,
    sentences,
)

MONTHS = [dt.date(2000, m, 1).strftime("%B") for m in range(1, 13)]


def test_dates_in_the_forms_documents_use_are_found_with_their_precision() -> None:
    text = "Out on October 4, 2021; 4 Oct 2021; 2021-10-04; October 2021; since 2019."
    found = [d.iso for d in find_dates(text)]
    assert found == ["2021-10-04", "2021-10-04", "2021-10-04", "2021-10", "2019"]
    first = find_dates(text)[0]
    assert text[first.start : first.end] == "October 4, 2021"


def test_impossible_dates_and_bare_numbers_are_not_dates() -> None:
    assert find_dates("February 30, 2021 and 2021-13-01 and page 2019") == []


def test_date_compatibility_respects_precision() -> None:
    day, month, year = DateValue(2021, 10, 4), DateValue(2021, 10), DateValue(2021)
    assert day.compatible(month)
    assert month.compatible(year)
    assert not day.compatible(DateValue(2021, 10, 14))
    assert not month.compatible(DateValue(2021, 11))


@given(st.dates(min_value=dt.date(1700, 1, 1), max_value=dt.date(2999, 12, 31)))
def test_every_written_date_parses_back_to_itself(day: dt.date) -> None:
    for text in (
        day.isoformat(),
        f"{MONTHS[day.month - 1]} {day.day}, {day.year}",
        f"{day.day} {MONTHS[day.month - 1]} {day.year}",
    ):
        parsed = parse_date(f"released on {text}.")
        assert parsed is not None
        assert parsed.iso == day.isoformat()


def test_versions_need_a_word_before_them_or_three_parts() -> None:
    text = "New in version 3.8. Python 3.10 and v1.2 and 3.11.2, but not 2.5 or 127.0.0.1."
    assert [(v.text, v.prefix) for v in find_versions(text)] == [
        ("3.8", "version"),
        ("3.10", "Python"),
        ("1.2", "v"),
        ("3.11.2", ""),
    ]


@given(st.lists(st.integers(0, 99), min_size=2, max_size=4))
def test_a_version_after_version_is_read_exactly(parts: list[int]) -> None:
    text = ".".join(map(str, parts))
    found = find_versions(f"Changed in version {text}: something.")
    assert [v.parts for v in found] == [tuple(parts)]


def test_quantities_are_normalised_to_their_base_unit() -> None:
    found = find_quantities("Default five seconds, 1500 ms, 32 MiB, 1,000 bytes, 50% and 3 b")
    assert [(q.dimension, q.base) for q in found] == [
        ("time", 5.0),
        ("time", 1.5),
        ("size", 32 * 1024 * 1024),
        ("size", 1000.0),
        ("ratio", 0.5),
    ]
    assert found[0].compatible(find_quantities("5000 ms")[0])
    assert not found[0].compatible(found[2])


def test_entities_are_code_names_and_capitalised_names() -> None:
    text = "The function `math.isqrt()` and sqlite3 module beat Python 3.10 and use_enum()."
    keys = [e.key for e in find_entities(text)]
    assert keys == ["math.isqrt", "sqlite3", "python 3.10", "use_enum"]


def test_entity_keys_ignore_decoration() -> None:
    assert entity_key("`math.isqrt()`") == entity_key("math.isqrt") == "math.isqrt"
    assert entity_key("module-tomllib") == entity_key("the tomllib module") == "tomllib"


def test_sentences_split_at_stops_and_line_breaks_but_not_at_abbreviations() -> None:
    text = "New in version 3.8. It works, e.g. here.\nNext block"
    assert [text[s:e] for s, e in sentences(text)] == [
        "New in version 3.8.",
        "It works, e.g. here.",
        "Next block",
    ]
