"""A failure's message as events hold it: bounded, whatever the tool wrote.

A tool error's message is the tool's text, which may be megabytes; every view reads
the events (a live display, SSE, ``show``), and the whole text is in the failure's
``result`` (in the blob store when it is large). An event keeps the first
``MESSAGE_LIMIT`` characters and says how many more there were and where they are.
"""

from __future__ import annotations

__all__ = ["MESSAGE_LIMIT", "bounded_message"]

#: the characters of a failure's message that ``StepFailed`` and ``StepRetrying`` keep
MESSAGE_LIMIT = 4096
#: room for the note: a message up to ``MESSAGE_LIMIT + _NOTE_ROOM`` characters is kept
#: whole, so a message bounded once (a replay's, from the record) is left as it is
_NOTE_ROOM = 160

IN_RESULT = "the whole text is in the event's result"
NOT_RECORDED = "the rest is not recorded"


def bounded_message(message: str, where: str = NOT_RECORDED) -> str:
    """``message``, or its first ``MESSAGE_LIMIT`` characters and a note saying how many
    more there were and ``where`` they are, when it is longer than that and its note."""
    if len(message) <= MESSAGE_LIMIT + _NOTE_ROOM:
        return message
    more = len(message) - MESSAGE_LIMIT
    return f"{message[:MESSAGE_LIMIT]}... ({more:,} more characters; {where})"
