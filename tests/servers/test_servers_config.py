"""Reading mcpServers / VS Code servers files: typed values, env expansion, located errors."""

from __future__ import annotations

import pytest

from plansmith.errors import ServerConfigError
from plansmith.servers import HttpServer, StdioServer, parse_servers

GOOD = """{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
             "env": {"MEMORY_FILE_PATH": "${env:HOME}/mem.jsonl"}},
  "files":  {"command": "mcp-server-filesystem", "args": ["/srv/data"], "cwd": "/srv"},
  "remote": {"url": "http://127.0.0.1:8800/mcp",
             "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
}}"""


def test_reads_stdio_and_http_servers_with_env_expansion() -> None:
    config = parse_servers(GOOD, source="s.json", env={"HOME": "/home/u", "TOKEN": "t0k"})
    memory, files, remote = config.servers
    assert isinstance(memory, StdioServer)
    assert memory.args == ("-y", "@modelcontextprotocol/server-memory")
    assert dict(memory.env) == {"MEMORY_FILE_PATH": "/home/u/mem.jsonl"}
    assert isinstance(files, StdioServer)
    assert files.cwd == "/srv"
    assert isinstance(remote, HttpServer)
    assert dict(remote.headers) == {"Authorization": "Bearer t0k"}
    assert memory.loc is not None
    assert memory.loc.line == 2
    assert remote.loc is not None
    assert remote.loc.line == 5


def test_vs_code_servers_key_is_read_the_same_way() -> None:
    config = parse_servers('{"servers": {"a": {"command": "x"}}}', env={})
    assert config.names == ("a",)


def test_unset_env_variable_reports_its_place_and_hint() -> None:
    with pytest.raises(ServerConfigError) as info:
        parse_servers(GOOD, source="s.json", env={"HOME": "/h"})
    assert info.value.location is not None
    assert str(info.value.location) == "s.json:6:51"  # the ${env:TOKEN} itself
    assert "TOKEN" in info.value.message
    assert info.value.hint


def test_invalid_json_reports_line_and_column() -> None:
    with pytest.raises(ServerConfigError) as info:
        parse_servers('{"mcpServers": {\n  "a": {"command": }\n}}', source="s.json", env={})
    assert info.value.location is not None
    assert info.value.location.line == 2


def test_several_bad_servers_are_all_reported() -> None:
    text = '{"mcpServers": {\n"a": {},\n"b": {"command": "x", "url": "http://h"},\n"c": 3}}'
    with pytest.raises(ServerConfigError) as info:
        parse_servers(text, source="s.json", env={})
    message = str(info.value)
    assert "s.json:2" in message
    assert "s.json:3" in message
    assert "s.json:4" in message


def test_missing_top_level_key_is_an_error() -> None:
    with pytest.raises(ServerConfigError, match="mcpServers"):
        parse_servers('{"other": {}}', env={})


def test_max_in_flight_must_be_positive() -> None:
    with pytest.raises(ServerConfigError, match="maxInFlight"):
        parse_servers('{"mcpServers": {"a": {"command": "x", "maxInFlight": 0}}}', env={})


def test_type_names_the_transport_as_vs_code_writes_it() -> None:
    text = """{"servers": {
      "a": {"type": "stdio", "command": "x"},
      "b": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
      "c": {"type": "sse", "url": "http://127.0.0.1:2/sse"},
      "d": {"url": "http://127.0.0.1:3/mcp"},
      "e": {"type": "streamableHttp", "url": "http://127.0.0.1:4/mcp"}
    }}"""
    a, b, c, d, e = parse_servers(text, env={}).servers
    assert isinstance(a, StdioServer)
    http = [s for s in (b, c, d, e) if isinstance(s, HttpServer)]
    assert [s.sse for s in http] == [False, True, False, False]


def test_a_type_that_is_unknown_or_does_not_fit_is_reported_with_its_line() -> None:
    text = """{"mcpServers": {
      "ws": {"type": "websocket", "url": "ws://127.0.0.1:1/"},
      "odd": {"type": "sse", "command": "x"},
      "odd2": {"type": "stdio", "url": "http://127.0.0.1:1/mcp"},
      "listed": {"type": ["sse"], "url": "http://127.0.0.1:1/sse"}
    }}"""
    with pytest.raises(ServerConfigError) as info:
        parse_servers(text, source="s.json", env={})
    message = str(info.value)
    assert "s.json:2:22: server 'ws': type 'websocket' is not a transport plansmith" in message
    assert "s.json:3:23: server 'odd': type 'sse' does not fit its command" in message
    assert "s.json:4:24: server 'odd2': type 'stdio' does not fit its url" in message
    assert "s.json:5:26: server 'listed': type ['sse'] is not a transport" in message
