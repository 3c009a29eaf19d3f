"""Replanning when a tip rack runs out: replace the rack, then go on where the run stopped.

GTPyhop's ``bio_opentrons`` counts the tips it uses but has no notion of a rack
running empty, so its own methods cannot recover. The simulator refuses the
pick-up (``OutOfTipsError``); the runner records the refusal as a ``tool_error``
and, once retries are spent, asks this replanner for a new plan. The new plan
is the failed pick-up's rack replaced (the server's ``replace_tip_rack``), the
pick-up again, and every step that had not run, in the same order.
Any other failure gets no new plan (the run fails as before).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace

from plansmith.binding import Bindings, BoundPlan, ToolCatalog, bind, step_key
from plansmith.execution import ReplanFn, ReplanRequest, RunLog, StepFailed
from plansmith.model import Domain, Plan, Step

__all__ = ["tip_replanner", "OUT_OF_TIPS"]

OUT_OF_TIPS = re.compile(r"OutOfTipsError|no \d+ tip\(s\) left|no tips left")
_QUOTED = re.compile(r"'([^']+)'")


def _message(log: RunLog, run_id: str, step_id: str) -> str:
    found = ""
    for event in log.events(run_id):
        if isinstance(event, StepFailed) and event.step == step_id:
            found = str(event.message)
    return found


def _rack(step: Step, message: str, known: set[str]) -> str | None:
    """The rack to replace: named in the refusal, else the pick-up's own argument."""
    for name in _QUOTED.findall(message):
        if name in known:
            return str(name)
    for arg in step.args[1:]:
        if isinstance(arg, str) and arg in known:
            return arg
    return None


def tip_replanner(
    plan: Plan,
    domain: Domain,
    bindings: Bindings,
    catalog: ToolCatalog,
    *,
    log: RunLog,
    run_id: str,
    tip_racks: set[str],
    on_replan: Callable[[str], None] | None = None,
) -> ReplanFn:
    """The runner's replan hook for out-of-tips refusals of ``a_pick_up_tip``."""
    in_force = [plan]

    def replan(request: ReplanRequest) -> BoundPlan | None:
        if len(request.failed) != 1 or request.failed[-1].action != "a_pick_up_tip":
            return None
        failed = request.failed[-1]
        message = _message(log, run_id, failed.id)
        rack = _rack(failed, message, tip_racks)
        if not OUT_OF_TIPS.search(message) or rack is None:
            return None
        done = {s.id for s in request.succeeded}
        current = in_force[0].steps
        start = next(i for i, s in enumerate(current) if s.id == failed.id)
        rest = [s for s in current[start + 1 :] if s.id not in done]
        prefix = f"r{request.replans + 1}."
        steps = [Step(id=f"{prefix}replace", action="replace_tip_rack", args=(rack,))]
        for s in [failed, *rest]:
            steps.append(replace(s, id=prefix + s.id, after=(steps[-1].id,)))
        new = replace(in_force[0], steps=tuple(steps), decomposition=())
        in_force[0] = new
        if on_replan is not None:
            on_replan(
                f"{failed.id} {failed.action}{failed.args} refused ({message.strip()}); "
                f"inserted replace_tip_rack({rack}), then {len(steps) - 1} step(s) again"
            )
        available = {step_key(s): s.id for s in request.succeeded}
        return bind(new, domain, bindings, catalog, env=os.environ, available=available)

    return replan
