"""Content hashes and JSON forms for Python-function domains and problems.

A Python domain has no text the planner may read (reading its file would be
I/O), so its hash covers the names it declares and a digest of each declared
function's bytecode, constants and names: editing a method changes the hash,
renaming a local variable does too, reformatting the file does not. Problem
values (state variables, to-do items) become JSON: objects with attributes
(states, multigoals) become ``{"class": ..., "vars": {...}}``, dict keys their
canonical JSON text, sets sorted lists.
"""

from __future__ import annotations

import hashlib
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

__all__ = ["py_domain_hash", "py_problem_hash", "py_json", "step_arg"]


def py_domain_hash(domain: PyDomain) -> str:
    """``sha256:<hex>`` over the domain's declarations and its functions' code."""
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


def py_problem_hash(problem: PyProblem) -> str:
    """``sha256:<hex>`` over the initial state's variables and the to-do list."""
    return content_hash({"state": py_json(problem.state), "todo": py_json(problem.todo)})


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
