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

An ``${env.NAME}`` is how a secret reaches a tool, and the message goes to the run log
and every view: a string that holds one's value is told by the reference, never shown
(an environment variable whose bytes are not UTF-8 reads as lone surrogates, ``\\udcff``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from plansmith.binding import EnvRef, FactRef, OutputRef, Ref, find_refs, template_at
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
    found = _first_unencodable(arguments)
    if found is None:
        return
    keys, text = found
    where = "/".join(["arguments", *(str(k) for k in keys)])
    written, _ = template_at(template, keys)  # else the part that holds it
    what, hint = _told(text, written, resolve)
    raise ToolCallError(
        ErrorClass.PROTOCOL_ERROR,
        f"step {step}: the argument at {where} cannot be sent: {what}",
        hint=hint,
    )


def _told(text: str, written: JSONValue, resolve: Callable[[Ref], JSONValue]) -> tuple[str, str]:
    """What is wrong with ``text`` (rendered from ``written``) and the hint: by the
    ``${env.NAME}`` that gave it or is in it, never showing it, else by an excerpt."""
    refs = [(f"${{{inner}}}", ref) for inner, ref in find_refs(written) if ref is not None]
    bad = [(told, ref) for told, ref in refs if _unencodable_in(_resolved(resolve, ref))]
    secrets = _once(told for told, ref in refs if isinstance(ref, EnvRef))
    bad_secrets = _once(told for told, ref in bad if isinstance(ref, EnvRef))
    sources = _once(_describe(told, ref) for told, ref in bad if not isinstance(ref, EnvRef))
    if bad_secrets:
        also = f"; so does {sources}" if sources else ""
        return (
            f"the value of {bad_secrets} holds a lone surrogate (bytes that are not UTF-8){also}",
            "the environment variable's value (not shown: it may be a secret) holds bytes"
            " that are not UTF-8; export it as UTF-8 text in the shell that runs or"
            " resumes the run",
        )
    shown = (
        f"the string, which holds the value of {secrets} (not shown),"
        if secrets
        else f"the string {_excerpt(text)}"
    )
    origin = f"it came from {sources}" if sources else "it is written so in the bindings"
    return (
        f"{shown} holds a lone surrogate, which is not Unicode text (JSON-RPC is UTF-8); {origin}",
        "the tool that produced it wrote an escape such as \\ud800 alone in its JSON"
        " text; fix that tool's output, or read the text as text ($.text)",
    )


def _once(told: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(told))


def unset_env_error(step: str, name: str) -> ToolCallError:
    """The failure of ``step``, whose arguments read ``${env.NAME}``, where ``NAME`` is not
    set."""
    hint = f"export {name}=... in the shell that runs or resumes the run"
    return ToolCallError(
        ErrorClass.EXTRACTION_ERROR,
        f"step {step}: ${{env.{name}}}: environment variable {name} is not set ({hint})",
        hint=hint,
    )


def _describe(told: str, ref: Ref) -> str:
    if isinstance(ref, OutputRef | FactRef):
        return f"{told} (an output of an upstream step)"
    return told


def _resolved(resolve: Callable[[Ref], JSONValue], ref: Ref) -> JSONValue:
    try:
        return resolve(ref)
    except ToolCallError:  # pragma: no cover - rendering resolved it already
        return None


def _unencodable_in(value: Any) -> bool:
    return _first_unencodable(value) is not None


def _first_unencodable(value: Any) -> tuple[tuple[str | int, ...], str] | None:
    """Where the first string that UTF-8 cannot encode is in ``value`` (a key counts as
    in its value), and the string; None when there is none."""
    for keys, text in _strings(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return keys, text
    return None


def _strings(value: Any) -> Iterator[tuple[tuple[str | int, ...], str]]:
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, keys = stack.pop()
        if isinstance(item, str):
            yield keys, item
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                here = (*keys, key)
                if isinstance(key, str):
                    stack.append((key, here))
                stack.append((inner, here))
        elif isinstance(item, list | tuple):
            stack.extend((inner, (*keys, i)) for i, inner in reversed(list(enumerate(item))))


def _excerpt(text: str, most: int = 40) -> str:
    """``text`` as ``ascii`` writes it (the surrogate escaped), cut to about ``most``."""
    shown = ascii(text)
    return shown if len(shown) <= most else shown[: most - 4] + "...'"
