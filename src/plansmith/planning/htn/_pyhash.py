"""Content hashes and JSON forms for Python-function domains and problems.

A Python domain has no text the planner may read (reading its file would be
I/O), so its hash covers the names it declares and a digest of each declared
function's bytecode, constants and names: editing a method changes the hash,
renaming a local variable does too, reformatting the file does not. Problem
values (state variables, to-do items) become JSON: objects with attributes
(states, multigoals) become ``{"class": ..., "vars": {...}}``, dict keys their
canonical JSON text, sets sorted lists.

Each digest is computed once per object and kept (weakly, with the object) with
a *witness* of what it was computed from, checked on every call: for a domain,
each function's name and code object (a frozen :class:`PyDomain`'s tuples cannot
change, a function's ``__code__`` and ``__name__`` can); for a problem, a pickle
of its state and to-do list in which every object other than a plain value is
replaced by what :func:`py_json` reads of it (class name and ``__dict__``). A
GTPyhop state is mutable: changed after a plan, it gives another witness, and the
digest is computed again. Equal witnesses give equal JSON forms (a witness may
differ where the JSON does not, as for a set in another order: the digest is then
only computed again); a witness that cannot be made (values nested too deep)
disables the cache for that call. The key is held weakly: the cache keeps no
domain or problem alive.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import weakref
from types import CodeType
from typing import Any

from plansmith.model import (
    JSONValue,
    PyCallable,
    PyDomain,
    PyProblem,
    StepArg,
    canonical_json,
    content_hash,
)
from plansmith.planning.htn._pyerrors import function_name

__all__ = [
    "domain_digest",
    "problem_digest",
    "py_domain_hash",
    "py_json",
    "py_problem_hash",
    "step_arg",
]


def py_domain_hash(domain: PyDomain) -> str:
    """``sha256:<hex>`` over the domain's declarations and its functions' code."""
    witness = _domain_witness(domain)
    try:
        kept = _DOMAIN_DIGESTS.get(domain)
    except TypeError:  # a callable that cannot be hashed: no cache
        return domain_digest(domain)
    if kept is not None and kept[0] == witness:
        return kept[1]
    digest = domain_digest(domain)
    _DOMAIN_DIGESTS[domain] = (witness, digest)
    return digest


def py_problem_hash(problem: PyProblem) -> str:
    """``sha256:<hex>`` over the initial state's variables and the to-do list."""
    witness = _problem_witness(problem)
    kept = _PROBLEM_DIGESTS.get(problem)
    if witness is not None and kept is not None and kept[0] == witness:
        return kept[1]
    digest = problem_digest(problem)
    if witness is not None:
        _PROBLEM_DIGESTS[problem] = (witness, digest)
    return digest


def domain_digest(domain: PyDomain) -> str:
    """:func:`py_domain_hash`, computed (never taken from the cache)."""
    return content_hash(
        {
            "name": domain.name,
            "actions": [[name, _fingerprint(fn)] for name, fn in domain.actions],
            "tasks": [[name, [_fingerprint(m) for m in ms]] for name, ms in domain.task_methods],
            "unigoals": [
                [name, [_fingerprint(m) for m in ms]] for name, ms in domain.unigoal_methods
            ],
            "multigoals": [_fingerprint(m) for m in domain.multigoal_methods],
        }
    )


def problem_digest(problem: PyProblem) -> str:
    """:func:`py_problem_hash`, computed (never taken from the cache)."""
    return content_hash({"state": py_json(problem.state), "todo": py_json(problem.todo)})


_DOMAIN_DIGESTS: weakref.WeakKeyDictionary[PyDomain, tuple[tuple[Any, ...], str]] = (
    weakref.WeakKeyDictionary()
)
_PROBLEM_DIGESTS: weakref.WeakKeyDictionary[PyProblem, tuple[bytes, str]] = (
    weakref.WeakKeyDictionary()
)


def _domain_witness(domain: PyDomain) -> tuple[Any, ...]:
    """What :func:`_fingerprint` reads of each function, in the domain's order (the
    names and the structure are in the frozen domain's tuples, which are the key)."""
    found: list[Any] = []
    for _, fn in domain.actions:
        found += (function_name(fn), getattr(fn, "__code__", None))
    for _, ms in (*domain.task_methods, *domain.unigoal_methods):
        for fn in ms:
            found += (function_name(fn), getattr(fn, "__code__", None))
    for fn in domain.multigoal_methods:
        found += (function_name(fn), getattr(fn, "__code__", None))
    return tuple(found)


def _problem_witness(problem: PyProblem) -> bytes | None:
    """A pickle of the state and the to-do list that differs whenever their
    :func:`py_json` forms do (None: a value cannot be pickled, or nests too deep)."""
    out = io.BytesIO()
    try:
        _Witness(out, protocol=pickle.HIGHEST_PROTOCOL).dump((problem.state, problem.todo))
    except (pickle.PickleError, TypeError, ValueError, AttributeError, RecursionError):
        return None
    return out.getvalue()


_PLAIN = frozenset({type(None), bool, int, float, str, list, tuple, dict, set, frozenset})


def _seen(*parts: Any) -> None:
    """Names the parts of a non-plain value in a witness (never called: witnesses
    are compared, not loaded)."""


class _Witness(pickle.Pickler):
    """Pickles plain values as they are (the C pickler's fast path) and any other
    object as the parts of it that :func:`py_json` reads, by the same tests."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind in _PLAIN or obj is _seen:
            return NotImplemented
        if isinstance(obj, int | float | str):  # a subclass (bool has none)
            return _seen, ("value", kind.__name__, _plain_text(obj))
        if isinstance(obj, list | tuple):
            return _seen, ("list", list(obj))
        if isinstance(obj, set | frozenset):
            return _seen, ("set", list(obj))
        if isinstance(obj, dict):
            return _seen, ("dict", list(obj.items()))
        attributes = getattr(obj, "__dict__", None)
        if isinstance(attributes, dict):
            return _seen, ("object", kind.__name__, list(attributes.items()))
        return _seen, ("class", kind.__name__)


def _plain_text(value: int | float | str) -> str:
    """A subclass instance's value as its base type writes it (as JSON does)."""
    base = int if isinstance(value, int) else float if isinstance(value, float) else str
    return base.__repr__(value)


def step_arg(value: Any) -> StepArg:
    """A plan step argument: JSON scalars as they are, anything else as its JSON text."""
    if value is None or isinstance(value, str | int | float):
        return value
    return canonical_json(py_json(value))


def py_json(value: Any) -> JSONValue:
    """A JSON value standing for a Python value (see the module docstring)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [py_json(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((py_json(v) for v in value), key=canonical_json)
    if isinstance(value, dict):
        return {_key(k): py_json(v) for k, v in value.items()}
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        fields = {str(k): py_json(v) for k, v in attributes.items()}
        return {"class": type(value).__name__, "vars": fields}
    return {"class": type(value).__name__}


def _key(key: Any) -> str:
    return key if isinstance(key, str) else canonical_json(py_json(key))


def _fingerprint(fn: PyCallable) -> str:
    code = getattr(fn, "__code__", None)
    name = function_name(fn)
    return name if not isinstance(code, CodeType) else f"{name}:{_code_digest(code)}"


def _code_digest(code: CodeType) -> str:
    digest = hashlib.sha256(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_argcount)).encode())
    for const in code.co_consts:
        if isinstance(const, CodeType):
            digest.update(_code_digest(const).encode())
        elif isinstance(const, frozenset):
            digest.update(repr(sorted(repr(c) for c in const)).encode())
        else:
            digest.update(repr(const).encode())
    return digest.hexdigest()[:16]
