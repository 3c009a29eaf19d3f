"""The verifier: claims aligned across sources, conflicts flagged, every claim labelled."""

from __future__ import annotations

import datetime as dt

from hypothesis import assume, given
from hypothesis import strategies as st

from plansmith.domains.research.verify import Evidence, claims_of, verify

MONTHS = [dt.date(2000, m, 1).strftime("%B") for m in range(1, 13)]


def _ev(source: str, text: str, subject: str = "", published: str | None = None) -> Evidence:
    return Evidence(source, f"{source}.md", f"p-{source}", text, 1, 1, subject, published)


def test_sphinx_version_notes_take_the_definition_as_their_entity() -> None:
    claims = claims_of(_ev("docs", "Return the root.\nNew in version 3.8.", "math.isqrt"))
    assert [(c.entity, c.attribute, c.value_text) for c in claims] == [
        ("math.isqrt", "added_in", "3.8")
    ]


def test_a_qualifier_after_the_version_narrows_the_attribute() -> None:
    text = "New in version 3.4: The uri parameter.\nNew in version 3.10: The audit event."
    claims = claims_of(_ev("docs", text, "sqlite3.connect"))
    assert [c.attribute for c in claims] == ["added_in:uri parameter", "added_in:audit event"]
    assert verify([_ev("docs", text, "sqlite3.connect")]).with_label("disputed") == ()


def test_a_named_thing_with_a_version_is_an_entity_not_a_claim() -> None:
    claims = claims_of(_ev("docs", "Python 3.10 was released on October 4, 2021."))
    assert [(c.entity, c.attribute, c.value_text) for c in claims] == [
        ("python 3.10", "released", "2021-10-04")
    ]


def test_values_without_words_that_say_what_they_are_are_not_claims() -> None:
    assert claims_of(_ev("docs", "It printed 3.11.2 and October 4, 2021 and 5 seconds.")) == []


def test_two_sources_that_agree_are_consistent_and_counted() -> None:
    verdict = verify(
        [
            _ev("docs", "New in version 3.8.", "math.isqrt"),
            _ev("notes", "The function `math.isqrt()` was added in Python 3.8."),
            _ev("blog", "math.isqrt was introduced in Python 3.8.0."),
        ]
    )
    (group,) = verdict.groups
    assert group.label == "consistent"
    assert group.agreeing == 3
    assert group.conflicts == ()


def test_one_source_alone_is_single_source_even_when_it_repeats_itself() -> None:
    verdict = verify(
        [
            _ev("docs", "New in version 3.8.", "math.isqrt"),
            _ev("docs", "Added in 3.8.", "math.isqrt"),
        ]
    )
    assert [g.label for g in verdict.groups] == ["single-source"]


def test_a_source_that_contradicts_itself_is_disputed() -> None:
    verdict = verify([_ev("docs", "Added in version 3.8. Added in version 3.9.", "x.y")])
    assert [g.label for g in verdict.groups] == ["disputed"]


def test_changes_are_multi_valued_and_never_conflict() -> None:
    verdict = verify(
        [
            _ev("docs", "Changed in version 3.2.\nChanged in version 3.8.", "x.y"),
            _ev("notes", "Changed in version 3.8.", "x.y"),
        ]
    )
    labels = {g.values[0][0]: g.label for g in verdict.groups}
    assert labels == {"3.2": "single-source", "3.8": "consistent"}


def test_quantities_conflict_when_their_amounts_differ() -> None:
    verdict = verify(
        [
            _ev("docs", "Default five seconds.", "sqlite3.connect"),
            _ev("notes", "Default 5000 ms.", "sqlite3.connect"),
            _ev("blog", "Default 10 seconds.", "sqlite3.connect"),
        ]
    )
    (group,) = verdict.groups
    assert group.attribute == "default time"
    assert group.label == "disputed"
    assert group.agreeing == 2
    assert dict(group.values) == {
        "5 seconds": ("docs",),
        "5000 ms": ("notes",),
        "10 seconds": ("blog",),
    }


def test_stale_evidence_does_not_count_and_is_flagged() -> None:
    evidence = [
        _ev("docs", "New in version 3.8.", "math.isqrt", published="2026-10-07"),
        _ev("old", "New in version 3.8.", "math.isqrt", published="2012-01-01"),
    ]
    as_of = dt.date(2026, 11, 29)
    (fresh,) = verify(evidence).groups
    (aged,) = verify(evidence, as_of=as_of, max_age_days=365).groups
    assert fresh.label == "consistent"
    assert aged.label == "single-source"
    assert [c.kind for c in aged.conflicts] == ["stale"]
    (only_old,) = verify(evidence[1:], as_of=as_of, max_age_days=365).groups
    assert only_old.label == "disputed"


def test_the_same_passage_found_twice_counts_once() -> None:
    one = _ev("docs", "New in version 3.8.", "math.isqrt")
    (group,) = verify([one, one]).groups
    assert len(group.claims) == 1


versions = st.lists(st.integers(0, 40), min_size=2, max_size=3).map(tuple)
entities = st.sampled_from(["math.isqrt", "tomllib", "asyncio.TaskGroup", "zoneinfo", "json.dumps"])
version_phrases = st.sampled_from(
    [
        "The function `{e}` was added in Python {v}.",
        "`{e}` is new in version {v}.",
        "{e} was introduced in Python {v}.",
    ]
)


@given(entities, versions, versions, version_phrases, version_phrases)
def test_planted_version_contradictions_are_always_disputed(
    entity: str, a: tuple[int, ...], b: tuple[int, ...], pa: str, pb: str
) -> None:
    assume(a[: min(len(a), len(b))] != b[: min(len(a), len(b))])
    text_a = pa.format(e=entity, v=".".join(map(str, a)))
    text_b = pb.format(e=entity, v=".".join(map(str, b)))
    verdict = verify([_ev("docs", text_a), _ev("planted", text_b)])
    group = verdict.find(entity.lower(), "added_in")
    assert group is not None
    assert group.label == "disputed"
    assert verdict.with_label("consistent") == ()


DATES = st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2999, 12, 31))


@given(DATES, DATES, st.booleans())
def test_planted_release_date_contradictions_are_always_disputed(
    a: dt.date, b: dt.date, iso: bool
) -> None:
    assume(a != b)
    written = b.isoformat() if iso else f"{b.day} {MONTHS[b.month - 1]} {b.year}"
    verdict = verify(
        [
            _ev("docs", f"Python 3.9 was released on {MONTHS[a.month - 1]} {a.day}, {a.year}."),
            _ev("planted", f"Python 3.9 was released on {written}."),
        ]
    )
    group = verdict.find("python 3.9", "released")
    assert group is not None
    assert group.label == "disputed"
    assert "value" in [c.kind for c in group.conflicts]


@given(entities, versions, version_phrases, version_phrases)
def test_the_same_version_from_two_sources_is_consistent(
    entity: str, v: tuple[int, ...], pa: str, pb: str
) -> None:
    text = ".".join(map(str, v))
    verdict = verify(
        [_ev("docs", pa.format(e=entity, v=text)), _ev("notes", pb.format(e=entity, v=text))]
    )
    assert [g.label for g in verdict.groups] == ["consistent"]
