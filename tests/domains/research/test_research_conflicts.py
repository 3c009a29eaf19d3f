"""Every conflict found: the verifier compares all typed values claims attach to the same
entity and attribute (dates, versions, numbers with units, counts), names both sources
with their lines, and flags no conflict between equal values written differently.
Also: source types (config or inferred) and bad research input."""

from __future__ import annotations

from pathlib import Path

import pytest

from plansmith.domains.research import (
    CONFIG_FILE,
    MAX_QUESTION_BYTES,
    check_question,
    check_source_folder,
    document_type,
    find_python_docs,
    folder_type,
)
from plansmith.domains.research.verify import Evidence, find_counts, verify
from plansmith.errors import InputError, ProblemError


def _verdict(one: str, two: str) -> list[tuple[str, str, str]]:
    evidence = [
        Evidence("one", "a.md", "pa", one, 3, 3, source_type="notes"),
        Evidence("two", "b.md", "pb", two, 7, 7, source_type="blog"),
    ]
    return [(g.entity, g.attribute, g.label) for g in verify(evidence).groups]


# (one source says, the other says, the group: entity and attribute)
DIFFERENT = [
    ("Frobnicator 4.2 was released on 2023-03-14.", "Frobnicator 4.2 was released on 2024-09-30.",
     ("frobnicator 4.2", "released")),
    ("Frobnicator 4.2 supports 64 workers.", "Frobnicator 4.2 supports 128 workers.",
     ("frobnicator 4.2", "count:workers")),
    ("Frobnicator supports up to 16 connections.", "Frobnicator supports up to 32 connections.",
     ("frobnicator", "max count:connections")),
    ("The latest version of Frobnicate is 2.4.1.", "The latest version of Frobnicate is 2.5.0.",
     ("frobnicate", "latest_version")),
    ("The default timeout of Frobnicator is 1.5 s.", "The default timeout of Frobnicator is 15 s.",
     ("frobnicator", "default time")),
    ("Frobnicator caches at most 32 MiB.", "Frobnicator caches at most 64 MiB.",
     ("frobnicator", "size")),
    ("Frobnicator reached end of life in October 2027.",
     "Frobnicator reached end of life in October 2028.", ("frobnicator", "end_of_life")),
]  # fmt: skip

EQUAL = [
    ("Frobnicator 4.2 was released on 2023-03-14.",
     "Frobnicator 4.2 was released on 14 March 2023."),
    ("Frobnicator 4.2 was released on March 14, 2023.",
     "Frobnicator 4.2 was released on 14th Mar 2023."),
    ("Frobnicator 4.2 was released on 2023-03-14.", "Frobnicator 4.2 was released in March 2023."),
    ("Frobnicator 4.2 supports 1,024 workers.", "Frobnicator 4.2 supports 1024 workers."),
    ("Frobnicator supports up to sixteen workers.", "Frobnicator supports up to 16 workers."),
    ("The default timeout of Frobnicator is 1.5 s.",
     "The default timeout of Frobnicator is 1500 ms."),
    ("Frobnicator caches at most 1 GiB.", "Frobnicator caches at most 1024 MiB."),
    ("Frobnicator requires version 3.11.", "Frobnicator requires version 3.11.0."),
    ("The latest version of Frobnicate is v2.5.", "The latest version of Frobnicate is 2.5.0."),
]  # fmt: skip


@pytest.mark.parametrize(("one", "two", "group"), DIFFERENT)
def test_every_kind_of_typed_value_is_compared(one: str, two: str, group: tuple[str, str]) -> None:
    assert (*group, "disputed") in _verdict(one, two)


@pytest.mark.parametrize(("one", "two"), EQUAL)
def test_equal_values_in_different_formats_are_no_conflict(one: str, two: str) -> None:
    groups = _verdict(one, two)
    assert groups, "both sentences hold a claim"
    assert all(label == "consistent" for _, _, label in groups), groups


def test_the_planted_notes_give_both_conflicts_each_naming_both_sources_and_lines() -> None:
    evidence = [
        Evidence(
            "NOTES",
            "frob-1.md",
            "p1",
            "Frobnicator 4.2 was released on 2023-03-14 and supports 64 workers.",
            1,
            1,
            source_type="notes",
        ),
        Evidence(
            "NOTES",
            "frob-2.md",
            "p2",
            "Some words first.\n"
            "Frobnicator 4.2 was released on 2024-09-30 and supports 128 workers.",
            4,
            5,
            spans=((0, 4, 4), (18, 5, 5)),
            source_type="notes",
        ),
    ]
    verdict = verify(evidence)
    disputed = {(g.entity, g.attribute): g for g in verdict.with_label("disputed")}
    assert set(disputed) == {("frobnicator 4.2", "released"), ("frobnicator 4.2", "count:workers")}
    released = disputed["frobnicator 4.2", "released"].conflicts[0].detail
    assert released == (
        "NOTES [notes] (frob-1.md:1-1) says 2023-03-14, "
        "NOTES [notes] (frob-2.md:5-5) says 2024-09-30"
    )
    workers = disputed["frobnicator 4.2", "count:workers"].conflicts[0].detail
    assert "(frob-1.md:1-1) says 64 workers" in workers
    assert "(frob-2.md:5-5) says 128 workers" in workers


def test_counts_need_words_that_say_what_they_measure() -> None:
    assert [(c.value, c.unit) for c in find_counts("It spawns 4 worker processes")] == [
        (4.0, "processes")
    ]
    assert find_counts("see the 3 examples in 2 sections") == []
    # "has 3 workers" says nothing the verifier compares: no claim, so no conflict
    assert _verdict("The pool has 3 workers.", "The pool has 5 workers.") == []


def test_different_things_counted_are_different_attributes() -> None:
    groups = _verdict(
        "Frobnicator 4.2 supports 64 workers.", "Frobnicator 4.2 supports 64 threads."
    )
    assert sorted(a for _, a, _ in groups) == ["count:threads", "count:workers"]
    assert all(label == "single-source" for _, _, label in groups)


# -- source types -----------------------------------------------------------------------


def test_source_types_come_from_the_folder_config_or_its_name(tmp_path: Path) -> None:
    configured = tmp_path / "anything"
    configured.mkdir()
    (configured / CONFIG_FILE).write_text('type = "changelog"\n', encoding="utf-8")
    assert folder_type(configured) == "changelog"
    for name, kind in (
        ("NOTES", "notes"),
        ("team-blog", "blog"),
        ("CHANGES", "changelog"),
        ("release-notes", "changelog"),
        ("python-docs", "official docs"),
        ("misc", "unknown"),
    ):
        (tmp_path / name).mkdir()
        assert folder_type(tmp_path / name) == kind, name
    docs = find_python_docs()
    if docs is not None:
        assert folder_type(docs) == "official docs"
    assert document_type("official docs", "whatsnew/3.11.html") == "changelog"
    assert document_type("official docs", "library/math.html") == "official docs"
    assert document_type("unknown", "blog/post.md") == "blog"
    assert document_type("notes", "whatsnew.md") == "notes"


def test_a_source_config_with_an_unknown_type_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text('type = "gossip"\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        folder_type(tmp_path)
    assert info.value.hint
    assert "official docs" in info.value.hint


# -- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["", "   \n\t", "x" * (MAX_QUESTION_BYTES + 1)])
def test_an_empty_or_huge_question_is_a_problem_error_with_a_hint(question: str) -> None:
    with pytest.raises(ProblemError) as info:
        check_question(question)
    assert info.value.hint
    assert info.value.exit_code == 2


def test_a_question_of_exactly_the_limit_is_accepted() -> None:
    check_question("é" * (MAX_QUESTION_BYTES // 2))


def test_a_source_folder_that_is_missing_or_holds_nothing_readable_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(InputError, match="not a folder") as info:
        check_source_folder("gone", tmp_path / "gone")
    assert info.value.hint
    empty = tmp_path / "empty"
    (empty / ".hidden").mkdir(parents=True)
    (empty / ".hidden" / "a.md").write_text("hidden\n", encoding="utf-8")
    (empty / "_static").mkdir()
    (empty / "_static" / "b.md").write_text("static\n", encoding="utf-8")
    (empty / "data.bin").write_bytes(b"\0\1")
    (empty / ".note.md").write_text("dotfile\n", encoding="utf-8")
    with pytest.raises(InputError, match="nothing readable") as info:
        check_source_folder("empty", empty)
    assert info.value.hint
    (empty / "sub").mkdir()
    (empty / "sub" / "note.txt").write_text("Now it holds a note.\n", encoding="utf-8")
    assert check_source_folder("empty", empty) == empty.resolve()
