"""File operations open beneath the root: a folder swapped for a link after the check is refused.

The race QA reproduced, made deterministic: a hook runs right after
``Sandbox.resolve`` (the check) and swaps the parent folder ``d2`` for a
symbolic link to a folder outside the sandbox, before the tool opens anything.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from plansmith.domains.code import RefusedError, Sandbox
from plansmith.domains.code._symbols import find_symbol
from plansmith.domains.code._tools_read import list_directory, read_file, search_in_files
from plansmith.domains.code._tools_write import edit_file, write_file

OUTSIDE_TEXT = "outside = 'OUTSIDE-SECRET'\n"

Swap = Callable[[str, str], None]


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    tree = tmp_path / "tree"
    for folder, text in (("d2", "inside = 1\n"), ("other", "other = 2\n"), ("src", "a = 3\n")):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "x.py").write_text(text)
    (tree / ".git").mkdir()
    (tree / ".git" / "x.py").write_text("git = 4\n")
    (tree / "in").symlink_to("src")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.py").write_text(OUTSIDE_TEXT)
    return Sandbox(tree)


@pytest.fixture
def swap_after_check(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Swap:
    """``swap(folder, target)``: once the next path is checked, ``folder`` becomes a link."""
    checks: list[tuple[str, str]] = []
    original = Sandbox.resolve

    def resolve(self: Sandbox, given: object, *, write: bool = False) -> object:
        resolved = original(self, given, write=write)
        while checks:
            folder, target = checks.pop()
            shutil.rmtree(box.worktree / folder)
            (box.worktree / folder).symlink_to(target)
        return resolved

    monkeypatch.setattr(Sandbox, "resolve", resolve)
    return lambda folder, target: checks.append((folder, target))


def _outside(box: Sandbox) -> Path:
    return box.worktree.parent / "outside"


READS: dict[str, Callable[[Sandbox], object]] = {
    "read_file": lambda box: read_file(box, "d2/x.py", 0, 10),
    "list_directory": lambda box: list_directory(box, "d2", 0, 10),
    "search_in_files": lambda box: search_in_files(
        box,
        pattern="SECRET",
        path="d2",
        glob=None,
        regex=False,
        case_sensitive=True,
        offset=0,
        limit=10,
    ),
    "find_symbol": lambda box: find_symbol(box, "outside", "d2", 0, 10),
}


@pytest.mark.parametrize("tool", sorted(READS))
@pytest.mark.parametrize("absolute", [True, False])
def test_a_parent_swapped_for_a_link_out_after_the_check_is_not_read(
    box: Sandbox, swap_after_check: Swap, tool: str, absolute: bool
) -> None:
    swap_after_check("d2", str(_outside(box)) if absolute else "../outside")
    with pytest.raises(RefusedError) as refused:
        READS[tool](box)
    assert (box.worktree / "d2").is_symlink()  # the swap happened between check and open
    assert refused.value.code == "symlink_outside_sandbox"


WRITES: dict[str, Callable[[Sandbox], object]] = {
    "write_file": lambda box: write_file(box, "d2/x.py", "pwned\n"),
    "write_file (new file)": lambda box: write_file(box, "d2/new.py", "pwned\n"),
    "write_file (new folder)": lambda box: write_file(box, "d2/sub/new.py", "pwned\n"),
    "edit_file": lambda box: edit_file(box, "d2/x.py", "outside", "pwned", False),
}


@pytest.mark.parametrize("tool", sorted(WRITES))
def test_a_parent_swapped_for_a_link_out_after_the_check_is_not_written(
    box: Sandbox, swap_after_check: Swap, tool: str
) -> None:
    swap_after_check("d2", str(_outside(box)))
    with pytest.raises(RefusedError) as refused:
        WRITES[tool](box)
    assert (box.worktree / "d2").is_symlink()
    assert refused.value.code == "symlink_outside_sandbox"
    assert sorted(os.listdir(_outside(box))) == ["x.py"]  # nothing created, no temp file left
    assert (_outside(box) / "x.py").read_text() == OUTSIDE_TEXT


def test_a_link_swapped_in_that_stays_inside_is_followed(
    box: Sandbox, swap_after_check: Swap
) -> None:
    swap_after_check("d2", "other")
    assert read_file(box, "d2/x.py", 0, 10).lines == ["other = 2"]
    swap_after_check("other", "src")
    write_file(box, "other/y.py", "y = 5\n")
    assert (box.worktree / "src" / "y.py").read_text() == "y = 5\n"


def test_a_link_swapped_in_to_git_internals_is_refused(
    box: Sandbox, swap_after_check: Swap
) -> None:
    swap_after_check("d2", ".git")
    with pytest.raises(RefusedError) as refused:
        read_file(box, "d2/x.py", 0, 10)
    assert refused.value.code == "git_internals"


def test_links_inside_the_repository_still_work_for_every_file_operation(box: Sandbox) -> None:
    assert read_file(box, "in/x.py", 0, 10).lines == ["a = 3"]
    assert [e.name for e in list_directory(box, "in", 0, 10).entries] == ["x.py"]
    assert write_file(box, "in/new/b.py", "b = 6\n").created
    assert (box.worktree / "src" / "new" / "b.py").read_text() == "b = 6\n"
    edit_file(box, "in/x.py", "a = 3", "a = 7", False)
    assert (box.worktree / "src" / "x.py").read_text() == "a = 7\n"
    assert [m.path for m in find_symbol(box, "a", "in", 0, 10).matches] == ["src/x.py"]
