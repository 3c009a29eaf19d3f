"""The ``mcpServers`` JSON of desktop MCP clients (or VS Code's ``servers``), typed and checked.

Strings may hold ``${env:VAR}``; a variable that is not set is an error with its
location, and so is anything else that starts with ``${`` (VS Code's ``${input:...}``
and ``${workspaceFolder}``, a shell's ``${HOME}``, a malformed ``${env:...}``): plansmith
expands ``${env:NAME}`` only. A server is stdio (``command``) or HTTP (``url``); an HTTP
server speaks streamable HTTP unless its ``type`` is ``sse`` (the older HTTP+SSE
transport, which desktop clients still accept). ``type`` may also say ``stdio`` or
``http`` (VS Code's spellings; ``streamable-http`` and ``streamableHttp`` too), and must
then fit the server's ``command`` or ``url``. plansmith extensions, each optional:
``maxInFlight`` (calls in flight on that server, default 8) and ``inheritEnv`` (stdio:
start from this process's environment, default true; the SDK alone would pass only HOME,
PATH and a few).

The file is JSON with comments (``//`` and ``/* */``) and trailing commas allowed, as
VS Code's ``mcp.json`` is; a UTF-8 BOM is skipped. Other keys of a server, which other
clients define (``disabled``, ``autoApprove``, ``envFile``, ...), are ignored, but a key
that looks like a misspelt key of ours (``comand``, ``Env``) is an error. So are duplicate
keys and duplicate server names, values of the wrong type, and values a server could not
start with (a NUL in an argument, an env name with ``=``, a url without a host); each
problem is reported at the key or value it is about, and all of them at once.

The reader is a small JSON scanner that keeps the offset of every key and value
(``_jsonc``): values are exactly what ``json.loads`` would give, in linear time.
(Composing the text as YAML would pair no surrogates, refuse DEL, read ``1e5`` as a
string and take seconds per megabyte.)

(Over 500 lines: ``_Checker`` walks the file once and checks every key of every server
form against the others, so that all the file's problems come in one error with their
lines; its parts share the walk's state.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.errors import Location, ServerConfigError
from plansmith.formats.yaml_nodes import did_you_mean
from plansmith.servers._config_values import (
    bad_template,
    check_command,
    check_env_name,
    check_header_name,
    check_header_value,
    check_program,
    check_url,
)
from plansmith.servers._jsonc import JsoncScanner, JsonNode, Members, show

__all__ = [
    "StdioServer",
    "HttpServer",
    "InProcessServer",
    "ServerConfig",
    "ServersConfig",
    "load_servers",
    "parse_servers",
    "DEFAULT_MAX_IN_FLIGHT",
]

DEFAULT_MAX_IN_FLIGHT = 8


@dataclass(frozen=True, slots=True)
class StdioServer:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    inherit_env: bool = True
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    loc: Location | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class HttpServer:
    name: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    loc: Location | None = field(default=None, compare=False)
    sse: bool = False  # the older HTTP+SSE transport, not streamable HTTP


#: ``type`` values, by the transport they name
_TYPES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}


@dataclass(frozen=True, slots=True)
class InProcessServer:
    """A server object run in this process (tests, benchmarks, local action libraries)."""

    name: str
    server: Any = field(compare=False)
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    loc: Location | None = field(default=None, compare=False)


ServerConfig = StdioServer | HttpServer | InProcessServer


@dataclass(frozen=True, slots=True)
class ServersConfig:
    servers: tuple[ServerConfig, ...] = ()
    source: str | None = None

    def get(self, name: str) -> ServerConfig | None:
        for s in self.servers:
            if s.name == name:
                return s
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.servers)


_READ_HINTS = {
    "FileNotFoundError": "check the path: --servers names an mcpServers JSON file",
    "IsADirectoryError": "give the JSON file itself (e.g. servers.json), not its folder",
    "PermissionError": "make the file readable by this user",
}


def load_servers(path: str | Path, env: Mapping[str, str] | None = None) -> ServersConfig:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as error:
        raise ServerConfigError(
            f"cannot read servers file: {error.strerror or error}",
            location=Location(str(p)),
            hint=_READ_HINTS.get(type(error).__name__, "check the path and its permissions"),
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line_start = before.rfind(b"\n") + 1
        column = len(before[line_start:].decode("utf-8")) + 1
        raise ServerConfigError(
            f"the servers file is not UTF-8: byte 0x{data[error.start]:02X} cannot be read",
            location=Location(str(p), before.count(b"\n") + 1, column),
            hint="save the file as UTF-8 (JSON files are UTF-8)",
        ) from None
    return parse_servers(text, source=str(p), env=os.environ if env is None else env)


def parse_servers(
    text: str, *, source: str | None = None, env: Mapping[str, str] | None = None
) -> ServersConfig:
    """Parse servers JSON; every problem is reported in one ``ServerConfigError``.

    Several problems are raised as one error whose ``problems`` hold each (located).
    """
    scanner = JsoncScanner(text.removeprefix("\ufeff"), source)
    checker = _Checker(scanner, os.environ if env is None else env)
    servers = checker.servers(scanner.document())
    problems = checker.problems
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ServerConfigError(
            f"{len(problems)} problems in the servers file",
            location=Location(source),
            hint="fix every listed problem",
            problems=tuple(problems),
        )
    return ServersConfig(tuple(servers), source)


# --- the checks: every problem, each at the key or value it is about ---

#: the keys plansmith reads in a server
_KNOWN = ("command", "args", "env", "cwd", "url", "headers", "type", "maxInFlight", "inheritEnv")
#: keys other clients define that look like ours but are no misspelling (all ignored)
_ELSEWHERE = frozenset(
    {"envFile", "dev", "headersHelper", "comment", "_comment", "http_headers", "env_http_headers"}
)
#: other clients' names for our keys: an error when ours is missing, else ignored
_SPELLINGS = {"serverUrl": "url", "httpUrl": "url"}

_TEMPLATE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")

_HINTS = {
    "command": 'write the program as a string, e.g. "command": "npx"; its arguments go in "args"',
    "args": 'write a list of strings, e.g. "args": ["-y", "@scope/server"]',
    "env": 'write an object of strings, e.g. "env": {"NAME": "value"} (quote numbers)',
    "headers": 'write an object of strings, e.g. "headers": {"Authorization": "Bearer ..."}',
    "cwd": 'write the directory as a string, e.g. "cwd": "/srv"',
    "url": 'write the endpoint as a string, e.g. "url": "http://127.0.0.1:8800/mcp"',
    "maxInFlight": 'write a whole number >= 1, e.g. "maxInFlight": 1 (the default is 8)',
    "inheritEnv": "write true or false, without quotes",
}


def _a(node: JsonNode) -> str:
    """The value as a type error names it: "a list", "the number 42", "true"."""
    if node.kind in ("number", "string"):
        return f"the {node.kind} {show(node)}"
    kinds = {"object": "an object", "array": "a list", "null": "null"}
    return kinds.get(node.kind) or ("true" if node.value else "false")


class _Checker:
    def __init__(self, scanner: JsoncScanner, env: Mapping[str, str]) -> None:
        self.scanner = scanner
        self.env = env
        self._found: list[tuple[int, ServerConfigError]] = []

    @property
    def problems(self) -> list[ServerConfigError]:
        """The problems found, in the order of the file."""
        return [error for _, error in sorted(self._found, key=lambda found: found[0])]

    def fail(self, offset: int, message: str, hint: str | None = None) -> None:
        self._found.append((offset, self.scanner.error(offset, message, hint)))

    def is_kind(self, node: JsonNode, kind: str, must: str, hint: str) -> bool:
        """Whether ``node`` is a JSON ``kind``; if not, the problem ``MUST, not <what it is>``."""
        if node.kind == kind:
            return True
        self.fail(node.start, f"{must}, not {_a(node)}", hint)
        return False

    def members(self, node: JsonNode, what: str) -> Members:
        """The keys of an object, each once (a second one is a problem)."""
        out: Members = {}
        for key, at, value in node.value:
            if key in out:
                first = self.scanner.loc(out[key][0]).line
                self.fail(at, f"{what}: duplicate key {key!r}", f"first given at line {first}")
            else:
                out[key] = (at, value)
        return out

    def servers(self, root: JsonNode) -> list[ServerConfig]:
        top = self.members(root, "the servers file") if root.kind == "object" else {}
        key = next((k for k in ("mcpServers", "servers") if k in top), None)
        if key is None:
            guess = next((g for k in top if (g := did_you_mean(k, ("mcpServers",)))), None)
            raise self.scanner.error(
                root.start,
                "a servers file needs a top-level 'mcpServers' (or 'servers') object",
                hint=f"{guess + ' ' if guess else ''}"
                'write {"mcpServers": {"NAME": {"command": ...} or {"url": ...}}}',
            )
        servers_node = top[key][1]
        if servers_node.kind != "object":
            raise self.scanner.error(
                servers_node.start,
                f"{key!r} must be an object of servers by name, not {_a(servers_node)}",
                hint='write {"NAME": {"command": ...} or {"url": ...}}',
            )
        out: list[ServerConfig] = []
        first_at: dict[str, int] = {}
        for name, at, node in servers_node.value:
            if name in first_at:
                first = self.scanner.loc(first_at[name]).line
                self.fail(
                    at,
                    f"server {name!r} is given twice",
                    hint=f"first given at line {first}; rename one or remove it",
                )
                continue
            first_at[name] = at
            server = self.server(name, at, node)
            if server is not None:
                out.append(server)
        return out

    def server(self, name: str, at: int, node: JsonNode) -> ServerConfig | None:
        what = f"server {name!r}"
        hint = 'write "NAME": {"command": ...} or "NAME": {"url": ...}'
        if not self.is_kind(node, "object", f"{what} must be an object", hint):
            return None
        before = len(self._found)
        fields = self.members(node, what)
        guessed = self._unknown_keys(what, fields)
        limit = self._max_in_flight(what, fields.get("maxInFlight"))
        kind = self._kind(what, fields)
        if "command" in fields and "url" in fields:
            later = max(fields["command"][0], fields["url"][0])
            self.fail(
                later,
                f"{what} has both 'command' and 'url'",
                hint="use command/args for stdio, or url/headers for streamable HTTP",
            )
        elif "command" not in fields and "url" not in fields and not guessed & {"command", "url"}:
            self.fail(
                at,
                f"{what} has neither 'command' nor 'url'",
                hint="stdio servers need a command; streamable HTTP servers need a url",
            )
        # The fields of every transport the server may mean are checked, even when it
        # cannot be built (a misspelt key, both command and url, or neither).
        stdio = "command" in fields or "command" in guessed or kind == "stdio"
        http = "url" in fields or "url" in guessed or kind in ("http", "sse")
        built: list[ServerConfig] = []
        if stdio or not http:
            built.append(self._stdio(name, at, fields, limit))
        if http or not stdio:
            built.append(self._http(name, at, fields, limit, kind == "sse"))
        return built[0] if len(built) == 1 and len(self._found) == before else None

    def _unknown_keys(self, what: str, fields: Members) -> set[str]:
        """Report the keys that look like misspelt keys of ours; the keys they meant."""
        meant: set[str] = set()
        lower = {k.lower(): k for k in _KNOWN}
        for key, (at, _) in fields.items():
            if key in _KNOWN or key in _ELSEWHERE:
                continue
            if key in _SPELLINGS:
                ours = _SPELLINGS[key]
                if ours in fields:
                    continue  # both: theirs is for the other client
                hint = f"plansmith reads {ours!r}; {key!r} is another client's name for it"
            else:
                same = lower.get(key.lower())
                guess = f"did you mean {same!r}?" if same else did_you_mean(key, _KNOWN)
                if guess is None:
                    continue  # another client's key: ignored
                ours = guess.split("'")[1]
                hint = f"{guess} (keys that other MCP clients define are ignored)"
            meant.add(ours)
            self.fail(at, f"{what}: unknown key {key!r}", hint)
        return meant

    def _max_in_flight(self, what: str, entry: tuple[int, JsonNode] | None) -> int:
        if entry is None:
            return DEFAULT_MAX_IN_FLIGHT
        node = entry[1]
        if node.kind != "number" or not isinstance(node.value, int) or node.value < 1:
            self.fail(
                node.start,
                f"{what}: maxInFlight must be a whole number >= 1, not {_a(node)}",
                _HINTS["maxInFlight"],
            )
            return DEFAULT_MAX_IN_FLIGHT
        return int(node.value)

    def _kind(self, what: str, fields: Members) -> str | None:
        has = "command" if "command" in fields else "url" if "url" in fields else None
        if "type" not in fields:
            return None
        node = fields["type"][1]
        kind = _TYPES.get(node.value) if node.kind == "string" else None
        if kind is None:
            self.fail(
                node.start,
                f"{what}: type {show(node)} is not a transport plansmith speaks",
                hint="type is stdio (with command), http (with url: streamable HTTP) or sse"
                " (with url: the older HTTP+SSE transport)",
            )
        elif has is not None and (has == "command") != (kind == "stdio"):
            self.fail(
                node.start,
                f"{what}: type {node.value!r} does not fit its {has}",
                hint="stdio servers have a command; http and sse servers have a url",
            )
        return kind

    def _stdio(self, name: str, at: int, fields: Members, limit: int) -> StdioServer:
        what = f"server {name!r}"
        command = ""  # none: a server that is not built, whose other fields are checked
        if "command" in fields:
            node = fields["command"][1]
            command = self.string(node, f"{what}: command", "command", check_command)
        args: list[str] = []
        if "args" in fields:
            node = fields["args"][1]
            must = f"{what}: args must be a list of strings"
            if self.is_kind(node, "array", must, _HINTS["args"]):
                args = [self.string(a, f"{what}: args", "args", check_program) for a in node.value]
        env = self.strings(fields.get("env"), f"{what}: env", "env", check_env_name, check_program)
        cwd: str | None = None
        if "cwd" in fields and fields["cwd"][1].kind != "null":
            cwd = self.string(fields["cwd"][1], f"{what}: cwd", "cwd", check_program)
        inherit = True
        if "inheritEnv" in fields:
            node = fields["inheritEnv"][1]
            must = f"{what}: inheritEnv must be true or false"
            self.is_kind(node, "boolean", must, _HINTS["inheritEnv"])
            inherit = node.value is True
        return StdioServer(
            name=name,
            command=command,
            args=tuple(args),
            env=env,
            cwd=cwd,
            inherit_env=inherit,
            max_in_flight=limit,
            loc=self.scanner.loc(at),
        )

    def _http(self, name: str, at: int, fields: Members, limit: int, sse: bool) -> HttpServer:
        what = f"server {name!r}"
        url = ""  # none: a server that is not built, whose other fields are checked
        if "url" in fields:
            url = self.string(fields["url"][1], f"{what}: url", "url", check_url)
        headers = self.strings(
            fields.get("headers"),
            f"{what}: headers",
            "headers",
            check_header_name,
            check_header_value,
        )
        return HttpServer(
            name=name,
            url=url,
            headers=headers,
            max_in_flight=limit,
            loc=self.scanner.loc(at),
            sse=sse,
        )

    def strings(
        self,
        entry: tuple[int, JsonNode] | None,
        what: str,
        field_name: str,
        check_name: Callable[[str], tuple[str, str] | None],
        check_value: Callable[[str], tuple[str, str] | None],
    ) -> tuple[tuple[str, str], ...]:
        """An object of strings (env, headers); null reads as empty."""
        if entry is None or entry[1].kind == "null":
            return ()
        node = entry[1]
        if not self.is_kind(
            node, "object", f"{what} must be an object of strings", _HINTS[field_name]
        ):
            return ()
        out: list[tuple[str, str]] = []
        for key, (at, value) in self.members(node, what).items():
            wrong = check_name(key)
            if wrong is not None:
                self.fail(at, f"{what}: the name {key!r} {wrong[0]}", wrong[1])
            out.append((key, self.string(value, f"{what}.{key}", field_name, check_value)))
        return tuple(out)

    def string(
        self,
        node: JsonNode,
        what: str,
        field_name: str,
        check: Callable[[str], tuple[str, str] | None],
    ) -> str:
        """A string with its ``${env:NAME}`` expanded and then checked ("" on a problem)."""
        if not self.is_kind(node, "string", f"{what} must be a string", _HINTS[field_name]):
            return ""
        value: str = node.value
        raw = self.scanner.text[node.start + 1 : node.end - 1]

        def at(index: int) -> int:  # the offset in the file of value[index]
            return node.start + 1 + (index if "\\" not in raw else _raw_offset(raw, index))

        parts: list[str] = []
        done = 0
        start = value.find("${")
        while start >= 0:
            template = _TEMPLATE.match(value, start)
            if template is None:
                message, hint = bad_template(value, start)
                self.fail(at(start), f"{what}: {message}", hint)
                return ""
            variable = template.group(1)
            if variable not in self.env:
                self.fail(
                    at(start),
                    f"{what}: environment variable {variable} is not set",
                    hint=f"export {variable}=... before running plansmith",
                )
                return ""
            parts += [value[done:start], self.env[variable]]
            done = template.end()
            start = value.find("${", done)
        expanded = "".join([*parts, value[done:]])
        wrong = check(expanded)
        if wrong is not None:
            after = " (after ${env:...})" if parts else ""
            self.fail(node.start, f"{what}: {show(node)}{after} {wrong[0]}", wrong[1])
            return ""
        return expanded


def _raw_offset(raw: str, index: int) -> int:
    """Where, in a JSON string's text ``raw`` (between its quotes), the character
    ``index`` of its value begins: escapes are longer than what they stand for."""
    at = 0
    for _ in range(index):
        if raw[at] != "\\":
            at += 1
        elif raw[at + 1] != "u":
            at += 2
        else:
            code = int(raw[at + 2 : at + 6], 16)
            at += 6
            low = raw[at + 2 : at + 6] if raw.startswith("\\u", at) else ""
            if 0xD800 <= code < 0xDC00 and low and 0xDC00 <= int(low, 16) < 0xE000:
                at += 6  # a surrogate pair: one character of the value
    return at
