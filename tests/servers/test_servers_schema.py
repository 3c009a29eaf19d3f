"""schemas/servers.schema.json: valid, it accepts what the servers reader accepts (the
formats.md example, every shipped servers file, VS Code's form) and catches what the
reader refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _schemas import ROOT, errors, formats_md_example, schema
from plansmith.errors import ServerConfigError
from plansmith.servers import parse_servers

SHIPPED = sorted(
    path
    for folder in ("domains", "examples")
    for path in (ROOT / "src" / "plansmith" / folder).glob("**/servers.json")
)
ENV = {
    "HOME": "/home/u",
    "TOKEN": "t",
    "PLANSMITH_BIO_RUN_ROOT": "/r",
    "PLANSMITH_BIO_INPUTS": "/i",
}
ENV |= {"PLANSMITH_CODE_CONFIG": "/c.json"}
ENV |= {"NOTES_WORKDIR": "/w"}  # examples/notes-to-git


def test_schema_describes_every_field() -> None:
    servers = schema("servers")
    assert all("description" in f for f in servers["$defs"]["server"]["properties"].values())
    assert all("description" in f for f in servers["properties"].values())


def test_the_formats_md_example_validates() -> None:
    example = formats_md_example("Servers", "json")
    parse_servers(example, env=ENV)
    assert errors("servers", json.loads(example)) == []


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT / "src")))
def test_every_shipped_servers_file_validates(path: Path) -> None:
    text = path.read_text("utf-8")
    parse_servers(text, source=str(path), env=ENV)
    assert errors("servers", json.loads(text)) == []


GOOD = {
    "vs code, typed": '{"servers": {"a": {"type": "stdio", "command": "x"},'
    ' "b": {"type": "http", "url": "http://127.0.0.1:1/mcp"},'
    ' "c": {"type": "sse", "url": "http://127.0.0.1:2/sse"}}, "inputs": []}',
    "extensions and desktop keys": '{"mcpServers": {"a": {"command": "x", "maxInFlight": 1,'
    ' "inheritEnv": false, "disabled": false, "autoApprove": []}}}',
    "other clients' keys": '{"servers": {"a": {"command": "x", "envFile": "/w/.env",'
    ' "dev": {"watch": "src/**"}, "gallery": true, "timeout": 60, "description": "d"}}}',
}


@pytest.mark.parametrize("text", GOOD.values(), ids=GOOD.keys())
def test_what_the_reader_accepts_the_schema_accepts(text: str) -> None:
    parse_servers(text, env={})
    assert errors("servers", json.loads(text)) == []


BAD = {
    "no servers": '{"other": {}}',
    "neither command nor url": '{"mcpServers": {"a": {}}}',
    "both": '{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}',
    "args not a list": '{"mcpServers": {"a": {"command": "x", "args": "-y"}}}',
    "zero in flight": '{"mcpServers": {"a": {"command": "x", "maxInFlight": 0}}}',
    "not http": '{"mcpServers": {"a": {"url": "ftp://h/mcp"}}}',
    "unknown type": '{"mcpServers": {"a": {"type": "websocket", "url": "http://h/"}}}',
    "type against command": '{"mcpServers": {"a": {"type": "sse", "command": "x"}}}',
    "env not strings": '{"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}}',
    "arg not a string": '{"mcpServers": {"a": {"command": "x", "args": [1]}}}',
    "inheritEnv a string": '{"mcpServers": {"a": {"command": "x", "inheritEnv": "false"}}}',
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_what_the_reader_refuses_the_schema_refuses(text: str) -> None:
    with pytest.raises(ServerConfigError):
        parse_servers(text, env={})
    assert errors("servers", json.loads(text))
