"""The ``mcpServers`` JSON of desktop MCP clients (or VS Code's ``servers``), typed and checked.

Strings may hold ``${env:VAR}``; a variable that is not set is an error with its
location. A server is stdio (``command``) or HTTP (``url``); an HTTP server speaks
streamable HTTP unless its ``type`` is ``sse`` (the older HTTP+SSE transport, which
desktop clients still accept). ``type`` may also say ``stdio`` or ``http`` (VS Code's
spellings; ``streamable-http`` and ``streamableHttp`` too), and must then fit the
server's ``command`` or ``url``. plansmith extensions, each optional: ``maxInFlight``
(calls in flight on that server, default 8) and ``inheritEnv`` (stdio: start from this
process's environment, default true; the SDK alone would pass only HOME, PATH and a few).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.errors import Location, ServerConfigError

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
_ENV_RE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


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


def load_servers(path: str | Path, env: Mapping[str, str] | None = None) -> ServersConfig:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as error:
        raise ServerConfigError(
            f"cannot read servers file: {error.strerror}", location=Location(str(p))
        ) from None
    return parse_servers(text, source=str(p), env=os.environ if env is None else env)


def _line_of(text: str, name: str, start: int = 0) -> int | None:
    m = re.compile(r'"' + re.escape(name) + r'"\s*:').search(text, start)
    return text.count("\n", 0, m.start()) + 1 if m else None


def parse_servers(
    text: str, *, source: str | None = None, env: Mapping[str, str] | None = None
) -> ServersConfig:
    """Parse servers JSON; every problem is reported in one ``ServerConfigError``."""
    env = os.environ if env is None else env
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ServerConfigError(
            f"not valid JSON: {error.msg}",
            location=Location(source, error.lineno, error.colno),
        ) from None
    key = next((k for k in ("mcpServers", "servers") if isinstance(data, dict) and k in data), None)
    if key is None or not isinstance(data[key], dict):
        raise ServerConfigError(
            "a servers file needs a top-level 'mcpServers' (or 'servers') object",
            location=Location(source, 1),
            hint='write {"mcpServers": {"NAME": {"command": ...} or {"url": ...}}}',
        )
    top = text.find(f'"{key}"')
    problems: list[ServerConfigError] = []
    servers: list[ServerConfig] = []
    for name, raw in data[key].items():
        loc = Location(source, _line_of(text, name, max(top, 0)))
        try:
            servers.append(_server(name, raw, loc, env))
        except ServerConfigError as error:
            problems.append(error)
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ServerConfigError(
            f"{len(problems)} problems in the servers file:\n"
            + "\n".join(f"  {p}" for p in problems),
            location=Location(source),
        )
    return ServersConfig(tuple(servers), source)


def _expand(value: Any, what: str, loc: Location, env: Mapping[str, str]) -> str:
    if not isinstance(value, str):
        raise ServerConfigError(f"{what} must be a string", location=loc)

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in env:
            raise ServerConfigError(
                f"{what}: environment variable {m.group(1)} is not set",
                location=loc,
                hint=f"export {m.group(1)}=... before running plansmith",
            )
        return env[m.group(1)]

    return _ENV_RE.sub(sub, value)


def _str_map(
    value: Any, what: str, loc: Location, env: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ServerConfigError(f"{what} must be an object of strings", location=loc)
    return tuple((str(k), _expand(v, f"{what}.{k}", loc, env)) for k, v in value.items())


def _server(name: str, raw: Any, loc: Location, env: Mapping[str, str]) -> ServerConfig:
    if not isinstance(raw, dict):
        raise ServerConfigError(f"server {name!r} must be an object", location=loc)
    limit = raw.get("maxInFlight", DEFAULT_MAX_IN_FLIGHT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ServerConfigError(
            f"server {name!r}: maxInFlight must be a whole number >= 1", location=loc
        )
    if "command" in raw and "url" in raw:
        raise ServerConfigError(
            f"server {name!r} has both 'command' and 'url'",
            location=loc,
            hint="use command/args for stdio, or url/headers for streamable HTTP",
        )
    named = raw.get("type", "stdio" if "command" in raw else "http")
    kind = _TYPES.get(named) if isinstance(named, str) else None
    if kind is None:
        raise ServerConfigError(
            f"server {name!r}: type {raw.get('type')!r} is not a transport plansmith speaks",
            location=loc,
            hint="type is stdio (with command), http (with url: streamable HTTP) or sse"
            " (with url: the older HTTP+SSE transport)",
        )
    if ("command" in raw) != (kind == "stdio") and ("command" in raw or "url" in raw):
        raise ServerConfigError(
            f"server {name!r}: type {raw.get('type')!r} does not fit its"
            f" {'command' if 'command' in raw else 'url'}",
            location=loc,
            hint="stdio servers have a command; http and sse servers have a url",
        )
    if "command" in raw:
        args = raw.get("args", [])
        if not isinstance(args, list):
            raise ServerConfigError(
                f"server {name!r}: args must be a list of strings", location=loc
            )
        cwd = raw.get("cwd")
        return StdioServer(
            name=name,
            command=_expand(raw["command"], f"server {name!r}: command", loc, env),
            args=tuple(_expand(a, f"server {name!r}: args", loc, env) for a in args),
            env=_str_map(raw.get("env"), f"server {name!r}: env", loc, env),
            cwd=_expand(cwd, f"server {name!r}: cwd", loc, env) if cwd is not None else None,
            inherit_env=bool(raw.get("inheritEnv", True)),
            max_in_flight=limit,
            loc=loc,
        )
    if "url" in raw:
        url = _expand(raw["url"], f"server {name!r}: url", loc, env)
        if not url.startswith(("http://", "https://")):
            raise ServerConfigError(f"server {name!r}: url must be http(s)://...", location=loc)
        return HttpServer(
            name=name,
            url=url,
            headers=_str_map(raw.get("headers"), f"server {name!r}: headers", loc, env),
            max_in_flight=limit,
            loc=loc,
            sse=kind == "sse",
        )
    raise ServerConfigError(
        f"server {name!r} has neither 'command' nor 'url'",
        location=loc,
        hint="stdio servers need a command; streamable HTTP servers need a url",
    )
