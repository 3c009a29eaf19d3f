"""Write tier, files: write a whole file, or replace exact text in one.

``edit_file`` replaces ``old_string`` only where it occurs exactly. It refuses
when the text is missing (``no_match``) or occurs more than once without
``replace_all`` (``ambiguous_match``, with the lines where it occurs), so an
edit never lands somewhere the caller did not mean. Text that came back
redacted cannot be used as an anchor (``redacted_text``).
"""

from __future__ import annotations

from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._files import read_bytes, sha256, write_bytes
from plansmith.domains.code._paths import Sandbox
from plansmith.domains.code._results import EditResult, WriteResult

__all__ = ["write_file", "edit_file"]


def write_file(box: Sandbox, path: str, content: str) -> WriteResult:
    target = box.resolve(path, write=True)
    try:
        data = content.encode("utf-8", errors="strict")
    except UnicodeEncodeError:
        raise RefusedError(
            "invalid_content",
            "the content is not valid Unicode text",
            fix="send UTF-8 text",
            path=target.relative,
        ) from None
    created = write_bytes(target, data)
    return WriteResult(path=target.relative, bytes=len(data), sha256=sha256(data), created=created)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def edit_file(
    box: Sandbox, path: str, old_string: str, new_string: str, replace_all: bool
) -> EditResult:
    target = box.resolve(path, write=True)
    if "[REDACTED:" in old_string:
        raise RefusedError(
            "redacted_text",
            "old_string contains redacted text, which is not what the file holds",
            fix="anchor the edit on nearby lines that hold no secret",
            path=target.relative,
        )
    if old_string == new_string:
        raise RefusedError(
            "no_change",
            "old_string and new_string are equal",
            fix="send the text to change",
            path=target.relative,
        )
    data = read_bytes(target)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RefusedError(
            "not_utf8",
            f"{target.relative} is not UTF-8 text",
            fix="edit text files only",
            path=target.relative,
        ) from None
    starts = []
    at = text.find(old_string)
    while at != -1:
        starts.append(at)
        at = text.find(old_string, at + len(old_string))
    if not starts:
        raise RefusedError(
            "no_match",
            f"old_string does not occur in {target.relative}",
            fix="read_file the current text and copy the lines exactly (whitespace included)",
            path=target.relative,
        )
    if len(starts) > 1 and not replace_all:
        lines = ", ".join(str(_line_of(text, s)) for s in starts[:10])
        raise RefusedError(
            "ambiguous_match",
            f"old_string occurs {len(starts)} times in {target.relative} (lines {lines})",
            fix="add surrounding lines to old_string so it occurs once, or set replace_all",
            path=target.relative,
        )
    updated = (
        text.replace(old_string, new_string)
        if replace_all
        else text.replace(old_string, new_string, 1)
    )
    encoded = updated.encode("utf-8")
    write_bytes(target, encoded)
    return EditResult(
        path=target.relative,
        replacements=len(starts) if replace_all else 1,
        first_line=_line_of(text, starts[0]),
        sha256=sha256(encoded),
    )
