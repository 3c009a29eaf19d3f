"""The path sandbox: each trick has its own refusal, and no accepted path lies outside the roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.domains.code import RefusedError, Sandbox


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    (tree / "out").symlink_to("../outside")
    (tree / "in").symlink_to("src")
    (tree / ".git").write_text("gitdir: /elsewhere\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    return Sandbox(tree, (docs,))


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ("../outside/secret.txt", "path_outside_sandbox"),
        ("src/../../outside", "path_outside_sandbox"),
        ("/etc/passwd", "path_outside_sandbox"),
        ("out/secret.txt", "symlink_outside_sandbox"),
        ("src/a.py\x00", "nul_byte"),
        ("src/\u200ba.py", "invalid_character"),
        ("src\\a.py", "invalid_character"),
        ("\uff0e\uff0e/outside", "lookalike_character"),
        ("..\u2215outside", "lookalike_character"),
        ("src/a\u0301.py", "unnormalized_unicode"),
        ("\uff53rc/a.py", "unnormalized_unicode"),
        ("a/" * 600, "path_too_long"),
        ("x" * 256, "path_too_long"),
        (".git", "git_internals"),
        ("src/../.GIT/config", "git_internals"),
        (".../x", "dot_component"),
        ("", "invalid_path"),
        (None, "invalid_path"),
    ],
)
def test_each_trick_is_refused_with_its_code(box: Sandbox, given: object, code: str) -> None:
    with pytest.raises(RefusedError) as refused:
        box.resolve(given)
    assert refused.value.code == code
    assert refused.value.hint  # every refusal suggests a fix


def test_paths_inside_resolve_to_their_real_place(box: Sandbox) -> None:
    assert box.resolve("src/a.py").relative == "src/a.py"
    assert box.resolve("in/a.py").relative == "src/a.py"  # a link inside stays allowed
    assert box.resolve(str(box.worktree / "src" / "a.py")).relative == "src/a.py"
    assert box.resolve(".").relative == "."
    assert box.resolve("src/new/file.txt", write=True).writable


def test_read_only_roots_refuse_writes(box: Sandbox) -> None:
    docs = box.roots[1]
    assert box.resolve(str(docs / "x.md")).root == docs
    with pytest.raises(RefusedError) as refused:
        box.resolve(str(docs / "x.md"), write=True)
    assert refused.value.code == "read_only_root"


ALPHABET = st.sampled_from(
    [
        "..",
        ".",
        "/",
        "src",
        "a.py",
        "out",
        "in",
        "\x00",
        "\uff0e",
        "\u2215",
        "~",
        "//",
        "é",
        "e\u0301",
        " ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=12).map("".join))
def test_an_accepted_path_never_lies_outside_the_roots(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    base = tmp_path_factory.getbasetemp() / "prop"
    tree = base / "tree"
    if not tree.exists():
        (tree / "src").mkdir(parents=True)
        (base / "outside").mkdir()
        (tree / "out").symlink_to("../outside")
        (tree / "in").symlink_to("src")
    box = Sandbox(tree)
    try:
        resolved = box.resolve(text)
    except RefusedError:
        return
    real = os.path.realpath(resolved.path)
    assert os.path.commonpath([real, str(box.worktree)]) == str(box.worktree)
