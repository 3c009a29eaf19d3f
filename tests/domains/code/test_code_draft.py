"""Checking an LLM-drafted patch: reading the diff (text) and ``check_draft`` (real git).

``read_diff`` is tried with Hypothesis on arbitrary text (it answers a diff or a
``RefusedError``, never another exception) and on the shapes models produce.
``check_draft`` runs on the toolz repository with the planted bug, in a scratch
worktree that it removes; each refused draft leaves the repository as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _code_fixtures as cf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.domains.code import RefusedError, check_draft, load_config, read_diff

FIX = ("        d[item] = 1\n", "        d[item] += 1\n")

ONE = (
    "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,3 +1,3 @@\n"
    " def f():\n-    return 1\n+    return 2\n \n"
)


def _read(text: str) -> tuple[tuple[str, list[Any]] | None, RefusedError | None]:
    try:
        diff, files = read_diff(text)
    except RefusedError as error:
        return None, error
    return (diff, list(files)), None


def _code(text: str) -> str:
    with pytest.raises(RefusedError) as caught:
        read_diff(text)
    return caught.value.code


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_a_diff_or_a_refusal(text: str) -> None:
    read, error = _read(text)
    if error is not None:
        assert error.code
        assert error.hint
    else:
        assert read is not None
        assert read[1]
        assert read[0].startswith("diff --git a/")


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=" +-@abc\n", max_size=200))
def test_hunk_like_text_after_a_header_is_a_diff_or_a_refusal(body: str) -> None:
    read, error = _read("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n" + body)
    assert (read is None) != (error is None)
    if error is not None:
        assert error.code in {"malformed_diff", "no_diff"}


def test_a_model_style_answer_is_normalised_and_its_counts_recomputed() -> None:
    answer = (
        "Sure! The bug is the return value.\n\n```diff\n"
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,7 +1,9 @@ def f\n"
        " def f():\n-    return 1\n+    return 2\n\n```\nHope this helps."
    )
    diff, files = read_diff(answer)
    assert diff == (
        "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
        "@@ -1,2 +1,2 @@ def f\n def f():\n-    return 1\n+    return 2\n"
    )
    assert [(f.path, f.added, f.deleted, f.created) for f in files] == [("pkg/mod.py", 1, 1, False)]


def test_a_new_text_file_is_allowed() -> None:
    diff, files = read_diff("--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,1 @@\n+x = 1\n")
    assert files[0].created
    assert "new file mode 100644\n--- /dev/null\n" in diff


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("Just change the 1 to a 2.", "no_diff"),
        ("--- a/x.py\nhello\n", "malformed_diff"),
        ("--- a/x.py\n+++ b/x.py\n", "malformed_diff"),
        ("--- a/x.py\n+++ b/x.py\n@@ nonsense @@\n-a\n+b\n", "malformed_diff"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n same\n", "malformed_diff"),
        (ONE + ONE, "malformed_diff"),
        (ONE + "some prose\n" + ONE.replace("mod", "other"), "malformed_diff"),
        ("diff --git a/x b/x\nGIT binary patch\nliteral 3\n", "binary_patch"),
        ("diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n", "binary_patch"),
        (ONE.replace("+    return 2", "+    return '\x00'"), "binary_patch"),
        ("diff --git a/x.py b/x.py\nold mode 100644\nnew mode 100755\n", "unsupported_change"),
        (
            "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n",
            "unsupported_change",
        ),
        ("diff --git a/x b/x\ndeleted file mode 100644\n", "unsupported_change"),
        ("diff --git a/x b/y\nsimilarity index 90%\nrename from x\n", "unsupported_change"),
        ("--- a/x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", "unsupported_change"),
        ("--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n", "unsupported_change"),
        (ONE.replace("pkg/mod.py", "../outside.py"), "path_outside_sandbox"),
        (
            ONE.replace("a/pkg/mod.py", "/etc/passwd").replace("b/pkg", "/etc"),
            "path_outside_sandbox",
        ),
        (ONE.replace("pkg/mod.py", ".git/config"), "git_internals"),
        (ONE.replace("pkg/mod.py", "pkg\u2215mod.py"), "lookalike_character"),
        (ONE.replace("pkg/mod.py", "pkg/mo\u200bd.py"), "invalid_character"),
        (ONE.replace("pkg/mod.py", "plansmith-code.toml"), "protected_file"),
        (ONE.replace("+    return 2", "+    return 2  # \u202e"), "bidi_control"),
        ("x" * (300 * 1024), "too_large"),
        (
            "".join(ONE.replace("mod", f"m{k}") for k in range(21)),
            "too_large",
        ),
    ],
)
def test_a_bad_draft_is_refused_with_its_code(answer: str, code: str) -> None:
    assert _code(answer) == code


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> cf.World:
    world = cf.make_world(tmp_path_factory.mktemp("draft") / "w")
    cf.plant_bug(world)
    return world


def _config(world: cf.World, tmp: Path) -> object:
    return load_config(
        world.repo,
        tier="execute",
        overrides={"worktree_root": str(tmp / "wt"), "state_dir": str(tmp / "st")},
    )


def test_the_right_patch_passes_every_check_in_a_scratch_worktree(
    world: cf.World, tmp_path: Path
) -> None:
    diff = cf.diff_of(world, *FIX)
    before = cf.snapshot(world.repo)
    checked = check_draft(_config(world, tmp_path), diff)  # type: ignore[arg-type]
    assert checked.files == ("toolz/itertoolz.py",)
    assert (checked.added, checked.deleted) == (1, 1)
    assert checked.tests == ()
    assert FIX[1].rstrip("\n") in checked.diff
    assert cf.snapshot(world.repo) == before
    assert len(cf.git(world.repo, "worktree", "list").splitlines()) == 1


@pytest.mark.parametrize(
    ("draft", "code"),
    [
        (lambda w: cf.diff_of(w, FIX[0], "        d[item] = 99\n").replace("= 1", "= 5"), None),
        (
            lambda w: "--- /dev/null\n+++ b/outside_link/owned.txt\n@@ -0,0 +1 @@\n+x\n",
            "symlink_outside_sandbox",
        ),
        (
            lambda w: "--- a/inside_link.py\n+++ b/inside_link.py\n@@ -1 +1 @@\n-x\n+y\n",
            "patch_does_not_apply",
        ),
        (
            lambda w: "--- /dev/null\n+++ b/toolz/itertoolz.py\n@@ -0,0 +1 @@\n+x = 1\n",
            "patch_does_not_apply",
        ),
    ],
)
def test_a_draft_that_escapes_or_does_not_apply_is_refused_and_leaves_no_trace(
    world: cf.World, tmp_path: Path, draft: object, code: str | None
) -> None:
    answer = draft(world)  # type: ignore[operator]
    before = cf.snapshot(world.repo, world.victim)
    refs = cf.git(world.repo, "show-ref")
    with pytest.raises(RefusedError) as caught:
        check_draft(_config(world, tmp_path), answer)  # type: ignore[arg-type]
    assert caught.value.code == (code or "patch_does_not_apply")
    assert caught.value.hint
    assert cf.snapshot(world.repo, world.victim) == before
    assert cf.git(world.repo, "show-ref") == refs
    assert len(cf.git(world.repo, "worktree", "list").splitlines()) == 1
    assert not list(tmp_path.glob("**/*.patch"))


def test_a_draft_that_edits_a_test_file_is_flagged(world: cf.World, tmp_path: Path) -> None:
    test_file = world.repo / "toolz" / "tests" / "test_itertoolz.py"
    text = test_file.read_text()
    test_file.write_text(text + "\n# relaxed\n")
    diff = cf.git(world.repo, "diff")
    test_file.write_text(text)
    checked = check_draft(_config(world, tmp_path), diff)  # type: ignore[arg-type]
    assert checked.tests == ("toolz/tests/test_itertoolz.py",)
