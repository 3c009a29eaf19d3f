"""The pool's stdio transport splits a server's output into lines in linear time
(``servers/_stdio._Lines``): pieces kept as they come and joined once, at the newline;
a line over the limit answers its request with a PARSE_ERROR and is skipped."""

from __future__ import annotations

import json

from mcp.shared.message import SessionMessage
from mcp.types import PARSE_ERROR, JSONRPCError, JSONRPCResponse

from plansmith.servers._stdio import DEFAULT_MAX_ANSWER, _Lines

CHUNK = 64 * 1024  # what one read of the pipe gives at most


def answer(request: int, text: str) -> bytes:
    content = [{"type": "text", "text": text}]
    line = {"jsonrpc": "2.0", "id": request, "result": {"content": content}}
    return json.dumps(line).encode() + b"\n"


def chunks(data: bytes, size: int = CHUNK) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def texts(items: list[SessionMessage | Exception]) -> list[object]:
    out: list[object] = []
    for item in items:
        assert isinstance(item, SessionMessage), item
        message = item.message
        if isinstance(message, JSONRPCResponse):
            out.append((message.id, message.result["content"][0]["text"]))
        else:
            assert isinstance(message, JSONRPCError)
            out.append((message.id, message.error.code, message.error.message))
    return out


def test_a_20_mb_line_is_kept_in_pieces_and_joined_once_at_its_newline() -> None:
    big = answer(1, "x" * 20_000_000)
    lines = _Lines(DEFAULT_MAX_ANSWER)
    pieces = chunks(big)
    for n, piece in enumerate(pieces[:-1], 1):
        assert lines.feed(piece) == []
        assert len(lines.parts) == n  # no copy of the line so far per chunk
    (item,) = lines.feed(pieces[-1])
    assert texts([item]) == [(1, "x" * 20_000_000)]
    assert lines.parts == []
    assert lines.size == 0


def test_lines_split_anywhere_come_out_whole_and_in_order() -> None:
    data = answer(1, "a") + answer(2, "b" * 300) + answer(3, "c")
    for size in (1, 7, 64, len(data)):
        lines = _Lines(DEFAULT_MAX_ANSWER)
        items = [item for piece in chunks(data, size) for item in lines.feed(piece)]
        assert texts(items) == [(1, "a"), (2, "b" * 300), (3, "c")]


def test_bytes_that_are_not_utf8_are_read_as_the_pools_handler_says() -> None:
    bad = answer(1, "caf").replace(b'caf"', b'caf\xff"')
    (item,) = _Lines(DEFAULT_MAX_ANSWER, "utf-8", "surrogateescape").feed(bad)
    assert isinstance(item, Exception)  # the SDK's parser refuses the lone surrogate
    (strict,) = _Lines(DEFAULT_MAX_ANSWER).feed(bad)
    assert isinstance(strict, UnicodeDecodeError)  # that line fails, not the reader


def test_a_line_over_the_limit_answers_its_request_and_the_next_lines_are_read() -> None:
    limit = 1000
    too_long = answer(7, "x" * 5000)
    data = answer(1, "before") + too_long + answer(2, "after")
    for size in (1, 100, 999, 1000, 1001, len(data)):
        lines = _Lines(limit)
        items = [item for piece in chunks(data, size) for item in lines.feed(piece)]
        said = "the server's answer was not read: longer than the limit of 1000 bytes"
        said += " for one answer"
        assert texts(items) == [(1, "before"), (7, PARSE_ERROR, said), (2, "after")], size


def test_a_line_of_exactly_the_limit_is_read() -> None:
    line = answer(1, "y" * 100)
    lines = _Lines(len(line) - 1)  # the newline is not counted
    assert texts(lines.feed(line)) == [(1, "y" * 100)]
    assert isinstance(_Lines(len(line) - 2).feed(line)[0].message, JSONRPCError)  # type: ignore[union-attr]


def test_a_line_over_the_limit_that_names_no_request_is_an_error_to_log() -> None:
    (item,) = _Lines(10).feed(b'{"jsonrpc": "2.0", "method": "notifications/message"}\n')
    assert isinstance(item, ValueError)
    assert "a line from the server was skipped" in str(item)
