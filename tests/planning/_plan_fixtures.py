"""Hand-made problems, the doc-pipeline example, random STRIPS tasks and golden files
for the plan-artifact tests (test_dag*, test_validate*, test_explain*)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from hypothesis import strategies as st

from plansmith.model import (
    ActionSchema,
    Atom,
    Condition,
    DecompositionNode,
    Domain,
    Equality,
    GroundAction,
    Literal,
    Plan,
    Predicate,
    Problem,
    Tier,
    TypedName,
    TypeHierarchy,
)
from plansmith.planning import build_plan, instantiate

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples" / "doc-pipeline"


def lit(pred: str, *args: str, positive: bool = True) -> Literal:
    return Literal(Atom(pred, tuple(args)), positive)


def neg(pred: str, *args: str) -> Literal:
    return lit(pred, *args, positive=False)


def _param(name: str, type_: str) -> TypedName:
    return TypedName(name, type_)


# -- rooms: a robot, lights and sweeping; small enough to reason about by hand ----------

ROOMS = Domain(
    name="rooms",
    types=TypeHierarchy.of({"robot": "object", "room": "object"}),
    predicates=(
        Predicate("at", (_param("r", "robot"), _param("a", "room"))),
        Predicate("clean", (_param("a", "room"),)),
        Predicate("lit", (_param("a", "room"),)),
    ),
    actions=(
        ActionSchema(
            "move",
            (_param("r", "robot"), _param("a", "room"), _param("b", "room")),
            (lit("at", "r", "a"), Equality("a", "b", positive=False)),
            (lit("at", "r", "b"), neg("at", "r", "a")),
        ),
        ActionSchema(
            "sweep",
            (_param("r", "robot"), _param("a", "room")),
            (lit("at", "r", "a"), lit("lit", "a")),
            (lit("clean", "a"),),
        ),
        ActionSchema(
            "switch_on",
            (_param("a", "room"),),
            (neg("lit", "a"),),
            (lit("lit", "a"),),
            cost=2,
            tier=Tier.EXECUTE,
        ),
        ActionSchema("switch_off", (_param("a", "room"),), (lit("lit", "a"),), (neg("lit", "a"),)),
        ActionSchema("spark", (_param("a", "room"),), (), (lit("lit", "a"),)),
        ActionSchema("cut", (_param("a", "room"),), (), (neg("lit", "a"),)),
        ActionSchema(
            "look", (_param("a", "room"),), (lit("lit", "a"),), (), cost=0, tier=Tier.READ
        ),
    ),
)


def rooms_problem(
    init: Sequence[Atom] = (Atom("at", ("r1", "k")),),
    goal: Sequence[Condition] = (),
) -> Problem:
    return Problem(
        name="rooms-1",
        domain=ROOMS,
        objects=(TypedName("r1", "robot"), TypedName("k", "room"), TypedName("h", "room")),
        init=frozenset(init),
        goal=tuple(goal),
    )


def act(domain: Domain, name: str, *args: str) -> GroundAction:
    schema = domain.action(name)
    assert schema is not None, name
    ground = instantiate(schema, args)
    assert ground is not None, (name, args)
    return ground


def rooms_plan(problem: Problem, *calls: tuple[str, ...]) -> Plan:
    """``build_plan`` of the sequence ``(name, *args), ...`` in the rooms domain."""
    return build_plan(problem, [act(ROOMS, c[0], *c[1:]) for c in calls], (("kind", "test"),))


def after(plan: Plan) -> dict[str, tuple[str, ...]]:
    return {s.id: s.after for s in plan.steps}


def with_after(plan: Plan, **edges: tuple[str, ...]) -> Plan:
    """``plan`` with the ``after`` of the named steps replaced."""
    steps = tuple(replace(s, after=edges.get(s.id, s.after)) for s in plan.steps)
    return replace(plan, steps=steps)


# -- the doc-pipeline example of formats.md, read from examples/ ---------------------------


def doc_pipeline() -> tuple[Problem, Problem]:
    """The classical problem (two-docs) and the HTN one (two-docs-htn)."""
    from plansmith.formats import load_domain, load_problem

    domain = load_domain(EXAMPLES / "domain.yaml")
    return (
        load_problem(EXAMPLES / "problem.yaml", domain),
        load_problem(EXAMPLES / "problem-htn.yaml", domain),
    )


DOC_SETTINGS = (("kind", "classical"), ("search", "lazy-gbfs"), ("heuristic", "ff"))


def doc_pipeline_plans() -> tuple[tuple[Problem, Plan], tuple[Problem, Plan]]:
    """The two example plans, built by hand from the sequences a planner would return."""
    classical, htn = doc_pipeline()
    d = classical.domain
    seq = [
        act(d, "summarise", "notes"),
        act(d, "summarise", "q3"),
        act(d, "index", "notes"),
        act(d, "index", "q3"),
    ]
    plan = build_plan(classical, seq, DOC_SETTINGS)
    htn_seq = [seq[0], seq[2], seq[1], seq[3]]
    tree = tuple(
        DecompositionNode(
            "publish",
            (doc,),
            "summarise_then_index",
            children=(
                DecompositionNode("summarise", (doc,), step=first),
                DecompositionNode("index", (doc,), step=second),
            ),
        )
        for doc, first, second in (("notes", "s1", "s2"), ("q3", "s3", "s4"))
    )
    htn_plan = build_plan(htn, htn_seq, (("kind", "htn"),), decomposition=tree)
    return (classical, plan), (htn, htn_plan)


# -- golden files -------------------------------------------------------------------------


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with tests/golden/NAME; PLANSMITH_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("PLANSMITH_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"{path} is missing; run the tests once with PLANSMITH_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if the change is intended, "
        "rerun with PLANSMITH_UPDATE_GOLDEN=1 and review the diff"
    )


# -- random STRIPS tasks with a valid sequential plan --------------------------------------

RANDOM_PREDICATE = Predicate("p", (TypedName("x"),))


@st.composite
def random_task(
    draw: st.DrawFn,
    max_atoms: int = 6,
    max_actions: int = 6,
    max_steps: int = 8,
    min_steps: int = 0,
) -> tuple[Problem, list[GroundAction]]:
    """A random STRIPS problem (0-ary actions over atoms p(o_i)) and a random walk that solves it.

    The goal is a random set of literals true after the walk, so the walk is a valid plan.
    Effects may add and delete the same atom (PDDL: it stays true).
    """
    n_atoms = draw(st.integers(1, max_atoms))
    atoms = [Atom("p", (f"o{i}",)) for i in range(n_atoms)]
    some = st.lists(st.sampled_from(atoms), max_size=3, unique=True).map(sorted)
    schemas = []
    for k in range(draw(st.integers(1, max_actions))):
        pos = draw(some)
        negs = [a for a in draw(some) if a not in pos]
        adds, dels = draw(some), draw(some)
        schemas.append(
            ActionSchema(
                f"a{k}",
                (),
                tuple(Literal(a) for a in pos) + tuple(Literal(a, False) for a in negs),
                tuple(Literal(a) for a in adds) + tuple(Literal(a, False) for a in dels),
                cost=draw(st.integers(0, 3)),
                tier=draw(st.sampled_from(list(Tier))),
            )
        )
    domain = Domain(name="random", predicates=(RANDOM_PREDICATE,), actions=tuple(schemas))
    ground = [act(domain, s.name) for s in schemas]
    init = frozenset(draw(st.lists(st.sampled_from(atoms), unique=True)))
    state, walk = init, []
    for _ in range(draw(st.integers(min_steps, max_steps))):
        options = [g for g in ground if g.applicable(state)]
        if not options:
            break
        chosen = options[draw(st.integers(0, len(options) - 1))]
        walk.append(chosen)
        state = chosen.apply(state)
    goal_atoms = draw(st.lists(st.sampled_from(atoms), unique=True, max_size=4))
    goal = tuple(Literal(a, a in state) for a in sorted(goal_atoms))
    problem = Problem(
        name="random",
        domain=domain,
        objects=tuple(TypedName(f"o{i}") for i in range(n_atoms)),
        init=init,
        goal=goal,
    )
    return problem, walk


def linearisations(plan: Plan) -> Iterator[list[int]]:
    """Every topological order of the plan's DAG (small plans only)."""
    index = {s.id: i for i, s in enumerate(plan.steps)}
    preds = [{index[a] for a in s.after} for s in plan.steps]

    def extend(prefix: list[int], done: set[int]) -> Iterator[list[int]]:
        if len(prefix) == len(preds):
            yield list(prefix)
            return
        for j in range(len(preds)):
            if j not in done and preds[j] <= done:
                prefix.append(j)
                done.add(j)
                yield from extend(prefix, done)
                done.remove(j)
                prefix.pop()

    yield from extend([], set())


def random_linearisation(plan: Plan, rng: random.Random) -> list[int]:
    index = {s.id: i for i, s in enumerate(plan.steps)}
    preds = [{index[a] for a in s.after} for s in plan.steps]
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(preds):
        ready = [j for j in range(len(preds)) if j not in done and preds[j] <= done]
        j = rng.choice(ready)
        order.append(j)
        done.add(j)
    return order


def runs_to_goal(problem: Problem, actions: Sequence[GroundAction], order: Sequence[int]) -> bool:
    """Whether ``actions`` in ``order`` are executable from init and reach the goal."""
    state = problem.init
    for j in order:
        if not actions[j].applicable(state):
            return False
        state = actions[j].apply(state)
    return all((c.atom in state) == c.positive for c in problem.goal if isinstance(c, Literal))
