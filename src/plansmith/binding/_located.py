"""Where a step's binding problem is: a field of its binding, or a value in its arguments."""

from __future__ import annotations

from dataclasses import replace

from plansmith.binding._model import Binding
from plansmith.errors import Location
from plansmith.model import Step

__all__ = ["here", "here_argument"]


def here(binding: Binding, key: str, step: Step) -> Location:
    """Where ``key`` of ``binding`` (``"tool"``, ``"outputs.NAME"``) was written, for ``step``."""
    loc = binding.where(key) or Location()
    return replace(loc, step=step.id)


def here_argument(binding: Binding, pointer: str, step: Step) -> Location:
    """Where the argument value at ``pointer`` was written, for ``step``."""
    loc = binding.where_argument(pointer) or binding.where("arguments") or Location()
    return replace(loc, step=step.id)
