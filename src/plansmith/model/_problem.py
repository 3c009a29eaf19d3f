"""Problems: objects, an initial state, and a goal or a task list."""

from __future__ import annotations

from dataclasses import dataclass, field

from plansmith.errors import Location
from plansmith.model._domain import Domain, Number, TaskCall
from plansmith.model._logic import OMIT_DEFAULT, Atom, Condition, Formula, TypedName

__all__ = ["Problem"]


@dataclass(frozen=True, slots=True)
class Problem:
    """A problem over ``domain``: a classical goal, an HTN task list, or both.

    ``init`` holds the true ground atoms (closed world). ``goal_formula`` holds
    the parts of a PDDL goal that are no literals (``or``, ``forall``,
    ``exists``); they must hold as well as ``goal``. ``function_values``
    gives numeric function values (PDDL action costs) as sorted pairs. ``loc``
    is where the problem is written (its ``problem:`` key, or its ``define``).
    """

    name: str
    domain: Domain
    objects: tuple[TypedName, ...] = ()
    init: frozenset[Atom] = frozenset()
    goal: tuple[Condition, ...] = ()
    tasks: tuple[TaskCall, ...] = ()
    function_values: tuple[tuple[Atom, Number], ...] = ()
    source: str | None = field(default=None, compare=False, hash=False, repr=False)
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)
    goal_formula: tuple[Formula, ...] = field(default=(), metadata=OMIT_DEFAULT)

    @property
    def all_objects(self) -> tuple[TypedName, ...]:
        """The domain's constants, then the problem's objects."""
        return self.domain.constants + self.objects
