"""Path sandboxing: a path a caller sends is checked as text, then lexically, then resolved.

:class:`Sandbox` holds an allowlist of roots: the session's worktree (read and
write) and any configured read-only roots. :meth:`Sandbox.resolve` refuses, each
with its own code:

* text tricks: empty paths, NUL bytes, control and format characters (zero-width,
  bidi overrides), backslashes, text that Unicode normalisation (NFC or NFKC)
  would change (full-width dots and slashes, ligatures, decomposed accents), and
  look-alikes of ``/`` and ``.`` (division slash, one-dot leader, ...);
* very long paths (over 1024 bytes, or a component over 255 bytes);
* anything under a ``.git`` component (git's own files decide what git does);
* a path whose normalised form (``..`` removed) lies outside every root, checked
  with :func:`os.path.commonpath`;
* a path that symlinks lead out of the roots (checked after :func:`os.path.realpath`).
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from plansmith.domains.code._errors import RefusedError

__all__ = [
    "MAX_PATH_BYTES",
    "MAX_NAME_BYTES",
    "Resolved",
    "Sandbox",
    "check_text",
    "git_refusal",
    "link_out_refusal",
]

MAX_PATH_BYTES = 1024
MAX_NAME_BYTES = 255

# Characters that render like a path separator or a dot but are not one.
_LOOKALIKES = frozenset(
    "\u2215\u2044\u29f8\u29f5\u2216\uff0f\uff3c\ufe68\u2afd\u244a\u0338\u0337"  # slashes
    "\u2024\u2025\u2026\ufe52\uff0e\u3002\uff61\u0701\u0702\ua4f8\u06d4\u2e31"  # dots
)
_FIX_RELATIVE = "give a path relative to the repository root, e.g. src/module.py"


@dataclass(frozen=True, slots=True)
class Resolved:
    """A checked path: the real path, the root it lies in, and its path relative to that root.

    ``path`` is where the path led when it was checked: for names and suffixes only.
    Files are opened with :mod:`plansmith.domains.code._beneath`, from ``root`` by
    ``relative``, so that a link put in after the check cannot lead out.
    """

    path: Path
    root: Path
    relative: str
    writable: bool


def _refuse(code: str, detail: str, given: str, fix: str = _FIX_RELATIVE) -> RefusedError:
    shown = given if len(given) <= 120 else given[:117] + "..."
    return RefusedError(code, detail, fix=fix, path=shown.replace("\x00", "\\0"))


def link_out_refusal(given: str) -> RefusedError:
    """The refusal of a path that a symbolic link leads out of the sandbox."""
    return _refuse(
        "symlink_outside_sandbox",
        f"{given} resolves through a symbolic link to a place outside the sandbox",
        given,
        "read the link's target inside the repository instead",
    )


def git_refusal(given: str) -> RefusedError:
    """The refusal of a path inside ``.git``."""
    return _refuse(
        "git_internals", "paths inside .git are not served", given, "use get_diff and the git tools"
    )


def check_text(given: object) -> str:
    """``given`` if it is a plain, normalised, reasonably short path text; else a refusal."""
    if not isinstance(given, str) or not given.strip():
        raise _refuse("invalid_path", "the path is empty or not a string", repr(given))
    if "\x00" in given:
        raise _refuse("nul_byte", "the path contains a NUL byte", given, "remove the NUL byte")
    if len(given.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise _refuse("path_too_long", f"the path is longer than {MAX_PATH_BYTES} bytes", given)
    for char in given:
        if unicodedata.category(char).startswith("C"):
            raise _refuse(
                "invalid_character",
                f"the path contains the control or format character U+{ord(char):04X}",
                given,
                "remove invisible characters from the path",
            )
        if char in _LOOKALIKES:
            raise _refuse(
                "lookalike_character",
                f"the path contains U+{ord(char):04X} ({unicodedata.name(char, '?')}), "
                "which looks like a separator or a dot",
                given,
                "use plain ASCII '/' and '.'",
            )
    if "\\" in given:
        raise _refuse(
            "invalid_character", "backslashes are not path separators here", given, "use '/'"
        )
    for form in ("NFC", "NFKC"):
        if unicodedata.normalize(form, given) != given:
            raise _refuse(
                "unnormalized_unicode",
                f"the path changes under Unicode {form} normalisation",
                given,
                f"send the {form} form of the path",
            )
    parts = [p for p in given.split("/") if p]
    if any(len(p.encode("utf-8")) > MAX_NAME_BYTES for p in parts):
        raise _refuse(
            "path_too_long", f"a path component is longer than {MAX_NAME_BYTES} bytes", given
        )
    if any(p.casefold() == ".git" for p in parts):
        raise git_refusal(given)
    if any(len(p) > 2 and p.strip(".") == "" for p in parts):
        raise _refuse("dot_component", "a path component made only of dots is refused", given)
    return given


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


class Sandbox:
    """The roots a session may touch: the worktree (read/write) and read-only extras."""

    def __init__(self, worktree: Path, read_roots: tuple[Path, ...] = ()) -> None:
        self.worktree = Path(os.path.realpath(worktree))
        self._roots = [(self.worktree, True)] + [
            (Path(os.path.realpath(r)), False) for r in read_roots
        ]

    @property
    def roots(self) -> tuple[Path, ...]:
        return tuple(r for r, _ in self._roots)

    def resolve(self, given: object, *, write: bool = False) -> Resolved:
        """The checked real path for ``given``; refuses anything outside the roots."""
        text = check_text(given)
        candidate = os.path.normpath(
            text if os.path.isabs(text) else os.path.join(self.worktree, text)
        )
        lexical = [(r, w) for r, w in self._roots if _inside(candidate, str(r))]
        if not lexical:
            raise _refuse(
                "path_outside_sandbox",
                f"{text} lies outside the repository worktree and the allowed roots",
                text,
            )
        real = os.path.realpath(candidate)
        held = [(r, w) for r, w in self._roots if _inside(real, str(r))]
        if not held:
            raise link_out_refusal(text)
        root, writable = held[0]
        relative = os.path.relpath(real, root)
        if any(p.casefold() == ".git" for p in Path(relative).parts):
            raise git_refusal(text)
        if write and not writable:
            raise _refuse(
                "read_only_root",
                f"{text} lies in a read-only root",
                text,
                "write inside the worktree",
            )
        return Resolved(Path(real), root, "." if relative == "." else relative, writable)
