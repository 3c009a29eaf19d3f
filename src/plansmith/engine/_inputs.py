"""A run's inputs and the checks made on them before anything of the run is written."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from plansmith.binding import Bindings, BoundPlan, EnvRef, find_refs, merge_across_steps
from plansmith.errors import BindingError, ExecutionError, InputError, Location
from plansmith.execution import ApprovalPolicy, Event, check_view
from plansmith.model import JSONValue, check_run_id

__all__ = [
    "Subscriber",
    "RunInputs",
    "made_from_files",
    "POLICY_KEY",
    "OWNER_KEY",
    "HOLD_KEY",
    "ASKED_KEY",
    "recorded_policy",
    "COSTS_KEY",
    "recorded_costs",
    "check_run_id",
    "json_inputs",
    "check_env",
    "run_inputs",
    "checked_policy",
    "checked_max_parallel",
    "checked_subscriber",
    "file_inputs",
]

#: a view of a run's events, called synchronously as each is recorded
Subscriber = Callable[[Event], None]


@dataclass(frozen=True, slots=True, init=False)
class RunInputs:
    """The files a run was made from (stored with the run, so that resume can reload them).

    Each is given as a ``Path`` or as text, and read back as a ``Path``."""

    domain: Path
    problem: Path
    servers: Path
    bindings: Path

    def __init__(
        self, domain: str | Path, problem: str | Path, servers: str | Path, bindings: str | Path
    ) -> None:
        # frozen: the dataclass's own ``__init__`` sets its fields this way too
        object.__setattr__(self, "domain", Path(domain))
        object.__setattr__(self, "problem", Path(problem))
        object.__setattr__(self, "servers", Path(servers))
        object.__setattr__(self, "bindings", Path(bindings))

    def to_dict(self) -> dict[str, str]:
        return {k: str(getattr(self, k)) for k in ("domain", "problem", "servers", "bindings")}

    def resolved(self) -> RunInputs:
        """The same files named by absolute paths (what a run records, so that it can be
        resumed from any directory)."""
        return RunInputs(
            self.domain.resolve(),
            self.problem.resolve(),
            self.servers.resolve(),
            self.bindings.resolve(),
        )

    @staticmethod
    def from_dict(data: Mapping[str, object]) -> RunInputs:
        return RunInputs(
            *(Path(str(data[k])) for k in ("domain", "problem", "servers", "bindings"))
        )


def made_from_files(inputs: Mapping[str, JSONValue]) -> bool:
    """Whether a run's recorded ``inputs`` name the files it was made from (``Engine.run``),
    so that it can be resumed; a run made by ``Engine.run_plan`` from a plan cannot."""
    return all(isinstance(inputs.get(k), str) for k in ("domain", "problem", "servers", "bindings"))


#: the key of a run's recorded ``inputs`` (``Engine.run``) that holds its approval policy,
#: as ``ApprovalPolicy.parse`` reads it; a run recorded without it has the default policy
POLICY_KEY = "approval_policy"


#: the key of a run's recorded ``inputs`` that holds who started it (``Engine.run``'s
#: ``owner``: a face's name for its user, e.g. ``web``, or the MCP face's ``local`` or
#: ``session:ID``; the CLI records none)
OWNER_KEY = "owner"

#: the key of a run's recorded ``inputs`` that says it is held for approval whatever its
#: policy (``Engine.run``'s ``hold``): it goes on only when approved
HOLD_KEY = "hold_for_approval"

#: the key of a run's recorded ``inputs`` that holds what its user asked for (a face's
#: request, goal, tasks, translation): the run's report shows it
ASKED_KEY = "asked"


#: the key of a run's recorded ``inputs`` that holds the action costs it was planned with
#: when they are not the domain's declared ones (``Engine.run``'s ``costs``: learned from
#: the run log), ``{action: cost}``; its replans plan with them too
COSTS_KEY = "costs"


def recorded_costs(inputs: Mapping[str, JSONValue]) -> dict[str, float] | None:
    """The action costs a run was planned with (``COSTS_KEY``); None: the declared ones."""
    costs = inputs.get(COSTS_KEY)
    if not isinstance(costs, dict):
        return None
    return {
        k: float(v)
        for k, v in costs.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def recorded_policy(inputs: Mapping[str, JSONValue]) -> ApprovalPolicy:
    """The approval policy a run was made with (``Engine.run`` records it under
    ``POLICY_KEY``); the default ``ApprovalPolicy()`` for a run recorded without one."""
    text = inputs.get(POLICY_KEY)
    return ApprovalPolicy.parse(text) if isinstance(text, str) else ApprovalPolicy()


def json_inputs(inputs: object) -> dict[str, JSONValue]:
    """``inputs`` as the JSON object ``RunCreated`` holds; ``InputError`` when it is not
    one (a ``Path``, a set, a NaN: nothing would be written, or JSON that is not)."""
    if not isinstance(inputs, Mapping) or not all(isinstance(k, str) for k in inputs):
        raise InputError(
            f"inputs must be a JSON object with text keys, not {type(inputs).__name__}",
            hint="pass a dict of str to JSON values (text, numbers, booleans, None, lists, dicts)",
        )
    try:
        text = json.dumps(dict(inputs), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(
            f"inputs are not JSON: {error}",
            hint="give JSON values only (e.g. str(path) for a Path, a finite number for"
            " a float; NaN and infinities are not JSON)",
        ) from None
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


def _strings_at(template: JSONValue, at: str = "") -> list[tuple[str, str]]:
    """``(JSON Pointer, text)`` of each string of ``template``."""
    if isinstance(template, str):
        return [(at, template)]
    if isinstance(template, dict):
        pairs = template.items()
    elif isinstance(template, list):
        pairs = ((str(i), v) for i, v in enumerate(template))  # type: ignore[assignment]
    else:
        return []
    found: list[tuple[str, str]] = []
    for key, value in pairs:
        part = str(key).replace("~", "~0").replace("/", "~1")
        found.extend(_strings_at(value, f"{at}/{part}"))
    return found


def check_env(bound: BoundPlan, bindings: Bindings, env: Mapping[str, str]) -> None:
    """The ``${env.NAME}`` references of ``bound``'s steps whose variable ``env`` does not
    set: ``BindingError`` as ``bind`` says it (located at the binding's argument, if the
    bindings still name the action), one problem per reference, those of one binding
    that several steps meet merged into one naming the steps (``merge_across_steps``)."""
    problems: list[BindingError] = []
    for step in bound.steps:
        binding = bindings.get(step.step.action)
        for pointer, text in _strings_at(step.arguments):
            for inner, ref in find_refs(text):
                if not isinstance(ref, EnvRef) or ref.name in env:
                    continue
                where = None
                if binding is not None:
                    where = binding.where_argument(pointer) or binding.where("arguments")
                problems.append(
                    BindingError(
                        f"${{{inner}}}: environment variable {ref.name} is not set",
                        location=replace(where or Location(), step=step.id),
                        hint=f"export {ref.name}=... before running plansmith",
                    )
                )
    merged = merge_across_steps(problems)
    if len(merged) == 1:
        raise merged[0]
    if merged:
        raise BindingError(
            f"{len(merged)} binding problem(s)",
            location=Location(bindings.source),
            hint="export each variable named before resuming",
            problems=merged,
        )


def run_inputs(inputs: object) -> RunInputs:
    """``inputs`` if it is a ``RunInputs``; else ``InputError`` (a path given alone)."""
    if not isinstance(inputs, RunInputs):
        raise InputError(
            f"a run's inputs are a RunInputs, not {type(inputs).__name__}",
            hint="give RunInputs(domain, problem, servers, bindings): the four files' paths",
        )
    return inputs


def checked_policy(policy: object) -> ApprovalPolicy:
    """``policy``, or the default ``ApprovalPolicy()`` for None; else ``InputError``."""
    if policy is None:
        return ApprovalPolicy()
    if not isinstance(policy, ApprovalPolicy):
        raise InputError(
            f"policy must be an ApprovalPolicy, not {type(policy).__name__}",
            hint='give ApprovalPolicy(frozenset({Tier.WRITE})) or ApprovalPolicy.parse("write")',
        )
    return policy


def checked_max_parallel(max_parallel: object) -> int:
    """``max_parallel``, checked before anything of the run is written: an ``int`` of 1
    or more (not a bool); else ``InputError``, rather than a runner that clamps it."""
    if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
        raise InputError(
            f"max_parallel must be an integer of 1 or more, not {max_parallel!r}",
            hint="max_parallel is the number of steps in flight at most: 1 or more",
        )
    return max_parallel


def checked_subscriber(subscribe: Subscriber | None) -> Subscriber | None:
    """``subscribe``, checked (``check_view``) before anything of the run is written."""
    return None if subscribe is None else check_view(subscribe)


def file_inputs(run_id: str, inputs: Mapping[str, JSONValue]) -> RunInputs:
    """The files ``run_id`` was made from; a run made by ``Engine.run_plan`` from a plan
    (no domain and problem file to load) cannot be resumed."""
    if not made_from_files(inputs):
        raise ExecutionError(
            f"run {run_id} was run from a plan made elsewhere, not from files: "
            "it cannot be resumed",
            hint="start a new run (with Engine.run_plan: run the plan again)",
        )
    files = RunInputs.from_dict(inputs)
    for path in (files.domain, files.problem, files.servers, files.bindings):
        if not path.is_absolute() and not path.exists():  # recorded by an older plansmith
            raise InputError(
                f"run {run_id} names its files relative to the directory it was started"
                f" in, and {path} is not in {Path.cwd()}",
                location=Location(str(path)),
                hint=f"run `plansmith resume {run_id}` from the directory where"
                " `plansmith run` started it",
            )
    return files
