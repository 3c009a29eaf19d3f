"""The checks of single values of the servers file: a ``${...}`` template, a program,
an environment variable's name, a header, a url. Each returns None, or the problem and
its hint."""

from __future__ import annotations

import re
import urllib.parse

__all__ = [
    "bad_template",
    "check_command",
    "check_env_name",
    "check_header_name",
    "check_header_value",
    "check_program",
    "check_url",
]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VS_CODE = re.compile(
    r"(workspaceFolder|workspaceFolderBasename|userHome|cwd|file\w*|relativeFile\w*"
    r"|pathSeparator|/|execPath|defaultBuildTask|lineNumber|selectedText"
    r"|config|command|input)(:.*)?",
    re.DOTALL,
)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")


def bad_template(value: str, start: int) -> tuple[str, str]:
    """What is wrong with the ``${`` at ``start``, and the hint."""
    close = value.find("}", start)
    inner = value[start + 2 : close] if close >= 0 else value[start + 2 :]
    shown = value[start : close + 1] if close >= 0 else value[start:]
    shown = repr(shown if len(shown) <= 40 else shown[:37] + "...")
    write = "plansmith expands ${env:NAME} only"
    if close < 0:
        return f"{shown} is not closed", "end it with '}': ${env:NAME}"
    if "${" in inner:
        return f"{shown}: templates do not nest", write
    head, _, rest = inner.partition(":")
    if head == "env":
        return (
            f"{shown}: {rest!r} is not an environment variable name",
            "a name is letters, digits and '_', not starting with a digit",
        )
    if head.lower() == "env":
        return f"{shown} is not a template", "write ${env:NAME} (env in lower case)"
    if head == "input":
        return (
            f"VS Code's {shown} (a prompt) is not supported",
            "plansmith does not prompt: set an environment variable and write ${env:NAME}",
        )
    if _VS_CODE.fullmatch(inner):
        return (
            f"VS Code's variable {shown} is not supported",
            "write the value itself, or ${env:NAME} with the value in the environment",
        )
    if _IDENTIFIER.fullmatch(head):
        return f"{shown} is not a template", f"for the environment variable write ${{env:{head}}}"
    return f"{shown} is not a template", write


def check_program(value: str) -> tuple[str, str] | None:
    if "\0" in value:
        return (
            "holds a NUL character (\\u0000)",
            "remove it: a program's command, arguments, environment and directory cannot hold NUL",
        )
    return None


def check_command(value: str) -> tuple[str, str] | None:
    if not value:
        return "is empty", 'name the program to start, e.g. "command": "npx"'
    return check_program(value)


def check_env_name(name: str) -> tuple[str, str] | None:
    if not name or "=" in name or "\0" in name:
        return "is not an environment variable name", "a name is not empty and has no '=' or NUL"
    return None


def check_header_name(name: str) -> tuple[str, str] | None:
    if not _HEADER_NAME.fullmatch(name):
        return "is not an HTTP header name", "letters, digits and !#$%&'*+-.^_`|~; no spaces"
    return None


def check_header_value(value: str) -> tuple[str, str] | None:
    if not _HEADER_VALUE.fullmatch(value):
        return (
            "is not an HTTP header value",
            "printable ASCII only: no line breaks, NUL or other characters (percent-encode)",
        )
    return None


def check_url(url: str) -> tuple[str, str] | None:
    example = 'write it as "http://127.0.0.1:8800/mcp"'
    if any(c.isspace() or not c.isprintable() for c in url):
        return "holds a space or a control character", "percent-encode it (a space is %20)"
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"is not a URL ({error})", example
    if parts.scheme not in ("http", "https"):
        return "must be http(s)://...", example
    if not parts.hostname:
        return "has no host", example
    if port == 0:
        return "has port 0", "give the port the server listens on (1-65535)"
    return None
