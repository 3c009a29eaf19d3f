"""Text that came from a tool or a server, made fit for a terminal line.

A tool's message, a run's reason or an output is whatever the tool wrote: megabytes, or
escape codes that clear the screen or forge a green "run succeeded". What the CLI prints
of it goes through ``printable``: at most ``most`` characters (so printing costs the same
whatever the tool wrote), its control characters shown escaped (``\\x1b``), and a note of
how many characters were left out. ``--json`` output is not shortened: JSON escapes them.
"""

from __future__ import annotations

import unicodedata

__all__ = ["LINE", "printable"]

#: the characters of a tool's text that a line of the live view shows
LINE = 300

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
#: control characters (C0, DEL, C1), lone surrogates (no encoding writes them), and the
#: line and paragraph separators: none reaches the terminal as it is
_ESCAPED = frozenset({"Cc", "Cs", "Zl", "Zp"})


def printable(text: str, most: int = LINE, *, lines: int = 1, whole: str = "") -> str:
    """``text`` as a terminal shows it safely: its first ``lines`` lines and at most
    ``most`` characters of them, each control character escaped (``\\x1b``, ``\\t``,
    ``\\u2028``; a newline is kept between the lines shown), then, when some of ``text``
    is left out, ``... (N more characters)`` (``; whole`` added: where the rest is)."""
    kept: list[str] = []
    used = taken = 0
    newlines = 0
    for char in text[:most]:  # an escape is longer than its character: most bounds both
        if char == "\n":
            newlines += 1
            if newlines >= lines:
                break
            piece = char
        elif unicodedata.category(char) in _ESCAPED:
            piece = _NAMED.get(char) or _escape(char)
        else:
            piece = char
        if used + len(piece) > most:
            break
        kept.append(piece)
        used += len(piece)
        taken += 1
    rest = len(text) - taken
    if not rest:
        return "".join(kept)
    noun = "character" if rest == 1 else "characters"
    where = f"; {whole}" if whole else ""
    return f"{''.join(kept)}... ({rest:,} more {noun}{where})"


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
