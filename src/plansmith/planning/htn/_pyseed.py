"""The string hash seed a Python-function domain plans under.

A domain's code may iterate over a set of strings, or over a dict built from
one; the order then depends on the process's hash seed (``PYTHONHASHSEED``), and
so, through the methods tried first, does the plan (GTPyhop's Childsnack and
cybersecurity domains do this). A plan is the same in every process only if the
seed is: plansmith's fixed seed is 0, the one seed a process can be *shown* to
use (``sys.flags.hash_randomization`` is 0 exactly when ``PYTHONHASHSEED=0``
was set when the interpreter started). ``plansmith plan`` of a GTPyhop folder
runs itself again under ``PYTHONHASHSEED=0`` when its own seed is not 0;
``plan_python`` plans in the caller's process, and records in the plan's
``planner`` settings ``hash_seed: 0``, or ``hash_seed: null`` when the seed is
not fixed (see :func:`process_hash_seed`).
"""

from __future__ import annotations

import sys

__all__ = ["FIXED_HASH_SEED", "process_hash_seed"]

#: The hash seed plansmith plans Python-function domains under.
FIXED_HASH_SEED = 0


def process_hash_seed() -> int | None:
    """This process's string hash seed if it is the fixed one (0), else None.

    None means the interpreter was started without ``PYTHONHASHSEED=0`` (unset,
    ``random``, or another number, which a running process cannot tell from a
    random one): plans of domains that iterate over sets may then differ from
    one process to the next.
    """
    return FIXED_HASH_SEED if sys.flags.hash_randomization == 0 else None
