"""Reading a model's answer as a unified diff: the text checks of an LLM-drafted patch.

:func:`read_diff` finds the diff in an answer (a fenced block, or the text from the
first file header), and rebuilds it file by file from what it understood: every
hunk's line counts are recounted (models often get them wrong), and prose before
or after the diff is dropped. It refuses, each with its own code:

* no diff at all (``no_diff``), or one it cannot read (``malformed_diff``);
* binary patches and NUL bytes (``binary_patch``);
* mode changes, symlinks, deletions, renames and copies (``unsupported_change``):
  a draft may only edit or create regular text files;
* bidi control characters in added lines (``bidi_control``, "Trojan Source");
* a file named twice, more than ``MAX_DRAFT_FILES`` files or a diff over
  ``MAX_DRAFT_BYTES`` (``too_large``);
* paths that are not plain relative paths (``path_outside_sandbox`` and the other
  codes of :func:`~plansmith.domains.code._paths.check_text`), and the project
  config ``plansmith-code.toml`` (``protected_file``): a patch never changes which
  commands the server runs.

The sandbox and ``git apply --check`` come after, in a scratch worktree (``_draft``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from plansmith.domains.code._config import PROJECT_FILE
from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._paths import check_text

__all__ = ["MAX_DRAFT_BYTES", "MAX_DRAFT_FILES", "DiffFile", "read_diff"]

MAX_DRAFT_BYTES = 256 * 1024
MAX_DRAFT_FILES = 20
PROTECTED = frozenset({PROJECT_FILE})

_FENCE = re.compile(r"^```[A-Za-z0-9_+-]*[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_UNSUPPORTED = (
    "old mode ",
    "new mode ",
    "deleted file mode",
    "rename from",
    "rename to",
    "copy from",
    "copy to",
    "similarity index",
    "dissimilarity index",
)
_FIX = "answer with a unified diff (git diff format) that edits text files of the project"


@dataclass(slots=True)
class DiffFile:
    """One file of a draft: its path, whether it is new, and its hunks (header, lines)."""

    path: str
    created: bool = False
    hunks: list[tuple[int, int, str, list[str]]] = field(default_factory=list)

    def text(self) -> str:
        old = "/dev/null" if self.created else f"a/{self.path}"
        out = [f"diff --git a/{self.path} b/{self.path}"]
        if self.created:
            out.append("new file mode 100644")
        out += [f"--- {old}", f"+++ b/{self.path}"]
        for old_start, new_start, tail, lines in self.hunks:
            old_n = sum(1 for x in lines if x[:1] in (" ", "-"))
            new_n = sum(1 for x in lines if x[:1] in (" ", "+"))
            out.append(f"@@ -{old_start},{old_n} +{new_start},{new_n} @@{tail}")
            out += lines
        return "\n".join(out) + "\n"

    @property
    def added(self) -> int:
        return sum(1 for _, _, _, lines in self.hunks for x in lines if x[:1] == "+")

    @property
    def deleted(self) -> int:
        return sum(1 for _, _, _, lines in self.hunks for x in lines if x[:1] == "-")


def _refuse(code: str, detail: str, fix: str = _FIX) -> RefusedError:
    return RefusedError(code, detail, fix=fix)


def _body(answer: str) -> str:
    """The diff part of an answer: the first fenced block that holds a file header, or
    the text from the first ``diff --git`` / ``--- `` line on."""
    for match in _FENCE.finditer(answer):
        block = match.group(1)
        if re.search(r"^(diff --git |--- )", block, re.MULTILINE):
            return block
    start = re.search(r"^(diff --git |--- )", answer, re.MULTILINE)
    if start is None:
        raise _refuse("no_diff", "the answer holds no unified diff (no '--- a/FILE' header)")
    return answer[start.start() :]


def _path(header: str, prefix: str) -> str | None:
    """The path of a ``--- a/P`` or ``+++ b/P`` line (None for /dev/null)."""
    value = header[4:].split("\t", 1)[0].rstrip()
    if value == "/dev/null":
        return None
    if value.startswith('"'):
        raise _refuse("malformed_diff", f"quoted path {value} in the diff", "use plain paths")
    if value.startswith(prefix):
        value = value[len(prefix) :]
    check_text(value)  # NUL, control and look-alike characters, unicode tricks, .git
    if value.startswith("/") or any(p == ".." for p in value.split("/")):
        raise RefusedError(
            "path_outside_sandbox",
            f"{value} lies outside the repository",
            fix="give paths relative to the repository root",
            path=value[:120],
        )
    if value.split("/")[-1] in PROTECTED and value.count("/") == 0:
        raise RefusedError(
            "protected_file",
            f"a drafted patch may not change {value}: it names the commands the server runs",
            fix="change the project's code, not the server's configuration",
            path=value,
        )
    return value


def _hunk_lines(lines: list[str], i: int) -> tuple[list[str], int]:
    """The lines of the hunk starting at ``lines[i]`` (after its ``@@`` line), and the
    index after it. A blank line is a context line whose space was lost."""
    body: list[str] = []
    while i < len(lines):
        line = lines[i]
        if line.startswith(("@@", "diff --git ")):
            break
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            break
        if line == "":
            body.append(" ")
        elif line[0] in " +-\\":
            body.append(line)
        else:
            break
        i += 1
    while body and body[-1] == " ":  # blank lines after the hunk are not context
        body.pop()
        i -= 1
    return body, i


def _check_line(line: str, path: str) -> None:
    if "\x00" in line:
        raise _refuse("binary_patch", f"the change to {path} holds a NUL byte")
    if line[:1] == "+" and _BIDI.search(line):
        raise _refuse(
            "bidi_control",
            f"an added line of {path} holds a bidirectional control character",
            "write the code without invisible direction overrides",
        )


def _extended(line: str) -> None:
    if line.startswith(("GIT binary patch", "Binary files ")):
        raise _refuse("binary_patch", "binary patches are refused", "patch text files only")
    if line.startswith(_UNSUPPORTED):
        raise _refuse(
            "unsupported_change",
            f"the diff changes a file's mode, deletes, renames or copies it ({line.strip()})",
            "a drafted patch may only edit or create regular text files",
        )
    mode = line.removeprefix("new file mode").strip()
    if line.startswith("new file mode") and mode != "100644":
        raise _refuse(
            "unsupported_change",
            f"the diff creates a file with mode {mode} (only 100644 is allowed)",
            "create regular, non-executable files only (no symlinks)",
        )


def _file(lines: list[str], i: int) -> tuple[DiffFile, int]:
    """The file whose ``--- `` line is ``lines[i]``."""
    if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
        raise _refuse("malformed_diff", f"'{lines[i][:80]}' is not followed by a '+++ ' line")
    old, new = _path(lines[i], "a/"), _path(lines[i + 1], "b/")
    if new is None:
        raise _refuse(
            "unsupported_change",
            f"the diff deletes {old}",
            "a drafted patch may only edit or create regular text files",
        )
    if old is not None and old != new:
        raise _refuse("unsupported_change", f"the diff renames {old} to {new}", "edit in place")
    entry = DiffFile(new, created=old is None)
    i += 2
    while i < len(lines) and lines[i].startswith("@@"):
        match = _HUNK.match(lines[i])
        if match is None:
            raise _refuse("malformed_diff", f"bad hunk header {lines[i][:80]!r} in {new}")
        body, i = _hunk_lines(lines, i + 1)
        for line in body:
            _check_line(line, new)
        if not any(x[:1] in "+-" for x in body):
            raise _refuse("malformed_diff", f"a hunk of {new} changes nothing")
        entry.hunks.append((int(match.group(1)), int(match.group(2)), match.group(3), body))
    if not entry.hunks:
        raise _refuse("malformed_diff", f"the diff of {new} has no hunk ('@@ -N,M +N,M @@')")
    return entry, i


def read_diff(answer: str) -> tuple[str, list[DiffFile]]:
    """The normalised diff in a model's ``answer``, and its files; refused as above."""
    if len(answer.encode("utf-8", "surrogatepass")) > MAX_DRAFT_BYTES:
        raise _refuse("too_large", f"the answer is over {MAX_DRAFT_BYTES // 1024} KiB", "be brief")
    lines = _body(answer).replace("\r\n", "\n").split("\n")
    files: list[DiffFile] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        _extended(line)
        if line.startswith("--- "):
            entry, i = _file(lines, i)
            files.append(entry)
            continue
        if files and line.strip() and not line.startswith(("diff --git ", "index ", "new file")):
            rest = "\n".join(lines[i:])
            if re.search(r"^(diff --git |--- |\+\+\+ |@@ )", rest, re.MULTILINE):
                raise _refuse("malformed_diff", f"unexpected line {line[:80]!r} inside the diff")
            break  # prose after the diff
        i += 1
    if not files:
        raise _refuse("no_diff", "the answer holds no file header ('--- a/FILE', '+++ b/FILE')")
    names = [f.path for f in files]
    if len(set(names)) != len(names):
        raise _refuse("malformed_diff", "the diff names a file twice", "one section per file")
    if len(files) > MAX_DRAFT_FILES:
        raise _refuse("too_large", f"the diff changes {len(files)} files", "keep the fix small")
    return "".join(f.text() for f in files), files
