"""Grounding: reachable, relevant operators over numbered fluent facts."""

from __future__ import annotations

from dataclasses import replace

from _search_fixtures import action, atom, lit, neg, problem

from plansmith.model import Atom, Equality, Problem
from plansmith.planning import function_table, instantiate
from plansmith.planning._grounding import ground
from plansmith.planning._task import Operator, TaskSpace, bits


def _names(operators: tuple[Operator, ...]) -> list[str]:
    return [op.name for op in operators]


MOVE = action(
    "move",
    [("?r", "robot"), ("?from", "room"), ("?to", "room")],
    pre=[lit("at", "?r", "?from"), lit("door", "?from", "?to")],
    eff=[lit("at", "?r", "?to"), neg("at", "?r", "?from")],
)


def _rooms(goal_room: str = "c") -> Problem:
    return problem(
        [MOVE],
        init=[atom("at", "bot", "a"), atom("door", "a", "b"), atom("door", "b", "c")],
        goal=[lit("at", "bot", goal_room)],
        objects=[("bot", "robot"), ("a", "room"), ("b", "room"), ("c", "room"), ("d", "room")],
        types={"robot": "object", "room": "object"},
    )


def test_only_reachable_operators_are_ground_not_every_tuple_of_objects() -> None:
    task = ground(_rooms())
    assert _names(task.operators) == ["move(bot, a, b)", "move(bot, b, c)"]


def test_static_facts_are_pruned_from_operators_and_states() -> None:
    task = ground(_rooms())
    assert atom("door", "a", "b") in task.static
    assert all(f.predicate == "at" for f in task.facts)
    for op in task.operators:
        assert all(task.facts[f].predicate == "at" for f in op.pre_facts)


def test_facts_are_numbered_in_sorted_order() -> None:
    task = ground(_rooms())
    assert list(task.facts) == sorted(task.facts, key=lambda a: (a.predicate, a.args))
    assert task.atoms(task.init) == frozenset(
        {atom("at", "bot", "a"), atom("door", "a", "b"), atom("door", "b", "c")}
    )


def test_operators_that_cannot_help_the_goal_are_dropped() -> None:
    # moving on to c never helps reach b
    task = ground(_rooms(goal_room="b"))
    assert _names(task.operators) == ["move(bot, a, b)"]
    assert task.facts == (atom("at", "bot", "a"), atom("at", "bot", "b"))


def test_parameter_types_follow_the_hierarchy() -> None:
    pick = action("pick", [("?x", "fruit")], eff=[lit("held", "?x")])
    prob = problem(
        [pick],
        init=[],
        goal=[lit("held", "apple"), lit("held", "pear")],
        objects=[("apple", "apple-type"), ("pear", "fruit"), ("stone", "object")],
        types={"fruit": "object", "apple-type": "fruit"},
    )
    task = ground(prob)
    assert _names(task.operators) == ["pick(apple)", "pick(pear)"]


def test_equality_conditions_are_respected() -> None:
    swap = action(
        "link",
        ["?x", "?y"],
        pre=[Equality("?x", "?y", positive=False)],
        eff=[lit("linked", "?x", "?y")],
    )
    prob = problem(
        [swap],
        init=[],
        goal=[lit("linked", "a", "b"), lit("linked", "b", "a")],
        objects=["a", "b"],
    )
    assert _names(ground(prob).operators) == ["link(a, b)", "link(b, a)"]


def test_constants_in_schemas_are_matched() -> None:
    go = action("go", ["?x"], pre=[lit("at", "?x", "home")], eff=[lit("at", "?x", "work")])
    prob = problem(
        [go],
        init=[atom("at", "ann", "home"), atom("at", "bob", "park")],
        goal=[lit("at", "ann", "work")],
        objects=["ann", "bob", "park"],
        constants=["home", "work"],
    )
    assert _names(ground(prob).operators) == ["go(ann)"]


def test_negative_preconditions_are_kept_as_masks() -> None:
    on = action("on", ["?x"], pre=[neg("lit", "?x")], eff=[lit("lit", "?x"), lit("seen", "?x")])
    off = action("off", ["?x"], pre=[lit("lit", "?x")], eff=[neg("lit", "?x")])
    prob = problem([on, off], init=[], goal=[lit("seen", "a"), neg("lit", "a")], objects=["a"])
    task = ground(prob)
    assert _names(task.operators) == ["on(a)", "off(a)"]
    lit_a = 1 << task.facts.index(atom("lit", "a"))
    assert task.operators[0].neg == lit_a
    assert task.goal_neg == lit_a


def test_operators_that_only_make_unwanted_facts_true_are_dropped() -> None:
    on = action("on", ["?x"], pre=[neg("lit", "?x")], eff=[lit("lit", "?x")])
    off = action("off", ["?x"], pre=[lit("switch", "?x")], eff=[neg("lit", "?x")])
    prob = problem(
        [on, off],
        init=[atom("lit", "a"), atom("switch", "a")],
        goal=[neg("lit", "a")],
        objects=["a"],
    )
    assert _names(ground(prob).operators) == ["off(a)"]


def test_negated_static_atoms_are_decided_while_grounding() -> None:
    go = action(
        "go",
        ["?x"],
        pre=[neg("blocked", "?x")],
        eff=[lit("visited", "?x")],
    )
    prob = problem(
        [go],
        init=[atom("blocked", "b")],
        goal=[lit("visited", "a")],
        objects=["a", "b"],
    )
    task = ground(prob)
    assert _names(task.operators) == ["go(a)"]
    assert task.operators[0].neg == 0


def test_a_negated_fluent_atom_that_is_never_reached_is_dropped() -> None:
    go = action("go", ["?x"], pre=[neg("broken", "?x")], eff=[lit("done", "?x")])
    smash = action("smash", ["?x"], pre=[lit("hammer", "?x")], eff=[lit("broken", "?x")])
    prob = problem([go, smash], init=[], goal=[lit("done", "a")], objects=["a"])
    task = ground(prob)
    assert _names(task.operators) == ["go(a)"]
    assert task.operators[0].neg == 0


def test_unreachable_goals_are_listed() -> None:
    task = ground(_rooms(goal_room="d"))
    assert [str(c) for c in task.unreachable_goal] == ["at(bot, d)"]


def test_a_goal_on_a_static_atom_is_decided() -> None:
    prob = _rooms()
    held = ground(
        problem(
            [MOVE],
            init=list(prob.init),
            goal=[lit("door", "a", "b"), neg("door", "a", "c")],
            objects=prob.objects,
        )
    )
    assert held.unreachable_goal == ()
    assert held.is_goal(held.init)
    broken = ground(
        problem([MOVE], init=[atom("door", "a", "b")], goal=[neg("door", "a", "b")], objects=[])
    )
    assert [str(c) for c in broken.unreachable_goal] == ["not door(a, b)"]


def test_initial_atoms_that_nothing_deletes_are_static() -> None:
    # "at" is changed for the robot, but nothing moves the charger
    prob = problem(
        [MOVE],
        init=[atom("at", "bot", "a"), atom("at", "dock", "b"), atom("door", "a", "b")],
        goal=[lit("at", "bot", "b"), lit("at", "dock", "b")],
        objects=[("bot", "robot"), ("dock", "thing"), ("a", "room"), ("b", "room")],
        types={"robot": "object", "room": "object", "thing": "object"},
    )
    task = ground(prob)
    assert atom("at", "dock", "b") in task.static
    assert atom("at", "dock", "b") not in task.facts
    assert task.unreachable_goal == ()


def test_operators_refer_back_to_their_ground_actions_with_costs() -> None:
    drive = action(
        "drive",
        ["?from", "?to"],
        pre=[lit("at", "?from"), lit("road", "?from", "?to")],
        eff=[lit("at", "?to"), neg("at", "?from")],
        cost=Atom("distance", ("?from", "?to")),
    )
    prob = problem(
        [drive],
        init=[atom("at", "a"), atom("road", "a", "b")],
        goal=[lit("at", "b")],
        objects=["a", "b"],
        functions=[(atom("distance", "a", "b"), 7)],
    )
    task = ground(prob)
    (op,) = task.operators
    assert op.cost == 7
    assert op.action == instantiate(drive, ("a", "b"), function_table(prob))
    assert op.action.cost == 7
    assert op.action.pre_pos == {atom("at", "a"), atom("road", "a", "b")}


def test_masks_and_fact_lists_agree() -> None:
    task = ground(_rooms())
    for op in task.operators:
        assert op.pre == sum(1 << f for f in op.pre_facts)
        assert op.add == sum(1 << f for f in op.add_facts)
        assert op.delete == sum(1 << f for f in op.del_facts)
        assert sorted(bits(op.pre)) == list(op.pre_facts)


def test_an_atom_both_added_and_deleted_stays_true() -> None:
    touch = action(
        "touch",
        ["?x"],
        pre=[lit("here", "?x")],
        eff=[neg("here", "?x"), lit("here", "?x"), lit("done", "?x")],
    )
    prob = problem([touch], init=[atom("here", "a")], goal=[lit("done", "a")], objects=["a"])
    task = ground(prob)
    (op,) = task.operators
    assert op.delete == 0
    assert task.is_goal(op.apply(task.init))
    assert task.atoms(op.apply(task.init)) == {atom("here", "a"), atom("done", "a")}


def test_the_search_space_lists_applicable_operators_by_id() -> None:
    task = ground(_rooms())
    space = TaskSpace(task)
    (first,) = space.successors(space.initial_state())
    assert task.operators[first[0]].name == "move(bot, a, b)"
    (second,) = [s for s in space.successors(first[1]) if s[0] != first[0]]
    assert space.is_goal(second[1])


def test_conditions_without_parameters_are_checked_too() -> None:
    # no positive precondition: the negated static atom and the equality of two
    # constants are the only conditions
    blocked = action("go", pre=[neg("closed")], eff=[lit("out")])
    same = action("eq", pre=[Equality("x", "y")], eff=[lit("out")])
    prob = problem([blocked, same], init=[atom("closed")], goal=[lit("out")])
    task = ground(prob)
    assert task.operators == ()
    assert [str(c) for c in task.unreachable_goal] == ["out()"]


def test_a_precondition_that_contradicts_a_static_atom_is_never_applicable() -> None:
    odd = action("odd", pre=[lit("day"), neg("day")], eff=[lit("out")])
    task = ground(problem([odd], init=[atom("day")], goal=[lit("out")]))
    assert task.operators == ()


def test_equalities_in_the_goal_are_decided() -> None:
    prob = _rooms()
    held = ground(replace(prob, goal=(*prob.goal, Equality("a", "a"))))
    assert held.unreachable_goal == ()
    broken = ground(replace(prob, goal=(*prob.goal, Equality("a", "b"))))
    assert [str(c) for c in broken.unreachable_goal] == ["a == b"]


def test_states_convert_to_and_from_atoms() -> None:
    task = ground(_rooms())
    state = task.mask([atom("at", "bot", "b"), atom("door", "a", "b"), atom("unknown")])
    assert task.atoms(state) == task.static | {atom("at", "bot", "b")}
    (op,) = [o for o in task.operators if o.applicable(state)]
    assert op.name == "move(bot, b, c)"
    assert task.unit_cost
