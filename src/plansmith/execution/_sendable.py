"""A step's rendered arguments: what stops them from being sent.

An ``${env.NAME}`` that is not set where the run goes on (a resume from another shell)
is not rendered as an empty string: the step fails (``extraction_error``, not retried:
the reference cannot be resolved, as an output missing from its producer cannot), and
the error names the variable and says to export it.

A request is UTF-8 JSON text.

A string with a lone surrogate (``"a\\ud800b"``, which ``json.loads`` reads from a tool's
JSON text) cannot be written as UTF-8: handed to the MCP SDK, it kills the stdio
transport's writer, and every call on that server with it. The runner checks the
arguments it rendered (never a step's static ones, which cost nothing per call) with
orjson, which refuses a lone surrogate and is fast; only when orjson refuses does a
walk look for the string at fault (orjson also refuses an integer past 64 bits, which
the SDK sends).

The failure is a ``protocol_error``: the upstream output was read as it was written,
and it is this step's request that cannot be put on the wire. (``extraction_error`` is
for an output that could not be read from a result.) Neither class is retried.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from plansmith.binding import EnvRef, OutputRef, Ref, find_refs
from plansmith.errors import ToolCallError
from plansmith.execution._invoker import ErrorClass
from plansmith.model import JSONValue

__all__ = ["check_sendable", "unset_env_error"]

try:
    import orjson

    _DUMPS: Callable[[Any], bytes] | None = orjson.dumps
except ImportError:  # pragma: no cover - orjson is a base dependency
    _DUMPS = None


def check_sendable(
    arguments: JSONValue,
    template: JSONValue,
    resolve: Callable[[Ref], JSONValue],
    step: str,
) -> None:
    """Raise the ``protocol_error`` of ``step`` when ``arguments`` (rendered from
    ``template``) hold a string that is not valid Unicode (a lone surrogate), naming the
    argument and the references of the template that gave it."""
    if _DUMPS is not None:
        try:
            _DUMPS(arguments)
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate, or a big integer
            pass
        else:
            return
    found = _first_unencodable(arguments, "arguments")
    if found is None:
        return
    where, text = found
    sources = [
        _describe(inner, ref)
        for inner, ref in find_refs(template)
        if ref is not None and _unencodable_in(_resolved(resolve, ref))
    ]
    origin = (
        f"; it came from {', '.join(dict.fromkeys(sources))}"
        if sources
        else "; it is written so in the bindings"
    )
    raise ToolCallError(
        ErrorClass.PROTOCOL_ERROR,
        f"step {step}: the argument at {where} cannot be sent: the string"
        f" {_excerpt(text)} holds a lone surrogate, which is not Unicode text (JSON-RPC"
        f" is UTF-8){origin}",
        hint="the tool that produced it wrote an escape such as \\ud800 alone in its JSON"
        " text; fix that tool's output, or read the text as text ($.text)",
    )


def unset_env_error(step: str, name: str) -> ToolCallError:
    """The failure of ``step``, whose arguments read ``${env.NAME}``, where ``NAME`` is not
    set."""
    hint = f"export {name}=... in the shell that runs or resumes the run"
    return ToolCallError(
        ErrorClass.EXTRACTION_ERROR,
        f"step {step}: ${{env.{name}}}: environment variable {name} is not set ({hint})",
        hint=hint,
    )


def _describe(inner: str, ref: Ref) -> str:
    if isinstance(ref, OutputRef):
        return f"${{{inner}}} (an output of an upstream step)"
    if isinstance(ref, EnvRef):
        return f"${{{inner}}} (an environment variable)"
    return f"${{{inner}}}"


def _resolved(resolve: Callable[[Ref], JSONValue], ref: Ref) -> JSONValue:
    try:
        return resolve(ref)
    except ToolCallError:  # pragma: no cover - rendering resolved it already
        return None


def _unencodable_in(value: Any) -> bool:
    return _first_unencodable(value, "") is not None


def _first_unencodable(value: Any, at: str) -> tuple[str, str] | None:
    """Where the first string that UTF-8 cannot encode is in ``value`` (a key counts as
    in its value), and the string; None when there is none."""
    for where, text in _strings(value, at):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return where, text
    return None


def _strings(value: Any, at: str) -> Iterator[tuple[str, str]]:
    stack: list[tuple[Any, str]] = [(value, at)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                here = f"{where}/{key}"
                if isinstance(key, str):
                    stack.append((key, here))
                stack.append((inner, here))
        elif isinstance(item, list | tuple):
            stack.extend((inner, f"{where}/{i}") for i, inner in reversed(list(enumerate(item))))


def _excerpt(text: str, most: int = 40) -> str:
    """``text`` as ``ascii`` writes it (the surrogate escaped), cut to about ``most``."""
    shown = ascii(text)
    return shown if len(shown) <= most else shown[: most - 4] + "...'"
