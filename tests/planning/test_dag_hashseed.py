"""The plan artifact does not depend on PYTHONHASHSEED: same bytes, same hash, same explanation."""

from __future__ import annotations

import os
import subprocess
import sys

# A task with many atoms and actions, so that any iteration over a set or a dict built
# from one would show up as a different order of edges, steps or lines.
_SCRIPT = r"""
import random
from plansmith.formats import plan_to_json, render_text
from plansmith.model import ActionSchema, Atom, Domain, Literal, Predicate, Problem, TypedName
from plansmith.planning import build_plan, explain, instantiate

rng = random.Random(20261129)
names = [f"item_{w}_{i}" for i, w in enumerate("alpha beta gamma delta eps zeta eta theta".split())]
atoms = [Atom(p, (n,)) for p in ("ready", "done", "held") for n in names]
schemas = []
for k in range(60):
    pre = rng.sample(atoms, 2)
    eff = rng.sample(atoms, 3)
    schemas.append(ActionSchema(
        f"act_{k}", (),
        tuple(Literal(a) for a in pre),
        tuple(Literal(a, i != 0) for i, a in enumerate(eff)),
        cost=rng.randint(1, 4),
    ))
predicates = tuple(Predicate(p, (TypedName("x"),)) for p in ("ready", "done", "held"))
domain = Domain("seeded", predicates=predicates, actions=tuple(schemas))
init = frozenset(rng.sample(atoms, 14))
ground = [instantiate(s, ()) for s in schemas]
state, walk = init, []
while len(walk) < 40:
    options = [g for g in ground if g.applicable(state)]
    if not options:
        break
    g = rng.choice(options)
    walk.append(g)
    state = g.apply(state)
goal = tuple(Literal(a, a in state) for a in sorted(rng.sample(atoms, 6)))
problem = Problem("seeded-1", domain, tuple(TypedName(n) for n in names), init, goal)
plan = build_plan(problem, walk, (("kind", "classical"), ("search", "test")))
print(len(walk))
print(plan_to_json(plan))
print(render_text(plan))
print(explain(plan, problem))
"""


def _run(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_plan_bytes_and_hash_are_the_same_under_any_hash_seed() -> None:
    first, second = _run("0"), _run("4242")
    assert int(first.split("\n", 1)[0]) >= 20  # the walk is long enough to mean something
    assert first == second
