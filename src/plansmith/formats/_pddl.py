"""PDDL domain and problem files to the model: the two entry points.

The reader is hand-written and tolerant (see :mod:`plansmith.formats._pddl_domain`
for what it accepts and refuses, and why requirement flags alone are never
refused). Every malformed input raises a :class:`~plansmith.errors.PlansmithError`
subclass with ``file:line:column`` and a hint: :class:`~plansmith.errors.ParseError`
for syntax, :class:`~plansmith.errors.DomainError` and
:class:`~plansmith.errors.ProblemError` for meaning, and
:class:`~plansmith.errors.UnsupportedFeatureError` for PDDL beyond STRIPS,
typing, negative preconditions, equality and action costs.
"""

from __future__ import annotations

from plansmith.formats._pddl_domain import parse_pddl_domain
from plansmith.formats._pddl_problem import parse_pddl_problem

__all__ = ["parse_pddl_domain", "parse_pddl_problem"]
