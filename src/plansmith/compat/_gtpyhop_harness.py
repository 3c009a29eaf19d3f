"""GTPyhop's ``gtpyhop.test_harness``: ``check_result`` and ``pause``, as its examples use them.

Under the ``gtpyhop`` alias this module is ``gtpyhop.test_harness`` (and
``gtpyhop.test_harness.test_harness``); see :mod:`plansmith.compat._gtpyhop_import`.
"""

from __future__ import annotations

import pdb
from typing import Any

__all__ = ["check_result", "pause"]


def check_result(actual: Any, expected: Any) -> None:
    """Raise if ``actual != expected``; otherwise say so (unless both are None)."""
    if actual != expected:
        raise Exception("Actual result differs from expected result.")
    if actual is not None:
        print("check_result> The result is as expected.\n")


def pause(do_pause: bool = True) -> None:
    """With ``do_pause``, wait for Enter (or ``d`` to enter the debugger); else go on."""
    if not do_pause:
        print("Continuing.")
        return
    typed = input(">>> Type Enter to continue, or d to debug: ")
    if typed == "d":
        print("            ===========================================")
        print("            Type 'c' or 'continue' to exit the debugger")
        print("            ===========================================")
        pdb.set_trace()
    else:
        print("=======================================================================")
