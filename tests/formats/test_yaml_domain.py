"""The YAML/JSON domain reader: the formats.md example, the extensions, and locations."""

from __future__ import annotations

import re
from pathlib import Path

from plansmith.formats import parse_domain
from plansmith.model import (
    Atom,
    Equality,
    Literal,
    Ordered,
    Parallel,
    TaskCall,
    Tier,
    TypedName,
    TypeHierarchy,
)

ROOT = Path(__file__).resolve().parents[2]
FORMATS_MD = ROOT / "docs" / "formats.md"
EXAMPLES = ROOT / "examples"


def formats_md_block(index: int) -> str:
    """The ``index``-th YAML block of docs/formats.md (0: domain, 1: problem)."""
    return re.findall(r"```yaml\n(.*?)```", FORMATS_MD.read_text(encoding="utf-8"), re.S)[index]


def lit(pred: str, *args: str, positive: bool = True) -> Literal:
    return Literal(Atom(pred, args), positive)


def test_shipped_doc_pipeline_domain_is_the_formats_md_example_verbatim() -> None:
    shipped = (EXAMPLES / "doc-pipeline" / "domain.yaml").read_text(encoding="utf-8")
    assert shipped == formats_md_block(0)


def test_formats_md_domain_parses_to_the_expected_model() -> None:
    domain = parse_domain(formats_md_block(0), file="domain.yaml")
    assert domain.name == "doc-pipeline"
    assert domain.source == "domain.yaml"
    assert domain.types == TypeHierarchy.of({"document": "object", "report": "document"})
    assert domain.types.is_subtype("report", "document")
    assert [(p.name, tuple(t.type for t in p.parameters)) for p in domain.predicates] == [
        ("exists", ("document",)),
        ("summarised", ("document",)),
        ("indexed", ("document",)),
        ("busy", ()),
    ]
    summarise, index = domain.actions
    assert summarise.name == "summarise"
    assert summarise.parameters == (TypedName("d", "document"),)
    assert summarise.precondition == (lit("exists", "d"), lit("summarised", "d", positive=False))
    assert summarise.effect == (lit("summarised", "d"),)
    assert (summarise.cost, summarise.tier) == (1, Tier.READ)
    assert index.effect == (lit("indexed", "d"), lit("busy", positive=False))
    assert (index.cost, index.tier) == (1, Tier.WRITE)


def test_formats_md_tasks_and_goals_parse_to_methods_and_networks() -> None:
    domain = parse_domain(formats_md_block(0))
    publish, publish_all = domain.tasks
    assert publish.parameters == (TypedName("d", "document"),)
    first, second = publish.methods
    assert first.name == "summarise_then_index"
    assert first.precondition == (lit("exists", "d"),)
    assert first.network == Ordered((TaskCall("summarise", ("d",)), TaskCall("index", ("d",))))
    assert second.name == "index_only"
    assert second.network == Ordered((TaskCall("index", ("d",)),))
    (both,) = publish_all.methods
    assert both.network == Ordered(
        (
            Parallel(
                (
                    Ordered((TaskCall("publish", ("a",)),)),
                    Ordered((TaskCall("publish", ("b",)),)),
                )
            ),
        )
    )
    (goal,) = domain.goals
    assert goal.name == "indexed"
    assert goal.description == "make a document searchable"
    assert goal.goal == (lit("indexed", "d"),)
    assert goal.parameters == (TypedName("d", "document"),)


def test_every_element_keeps_its_file_line_and_column() -> None:
    domain = parse_domain(formats_md_block(0), file="d.yaml")
    summarise = domain.actions[0]
    assert str(summarise.loc) == "d.yaml:11:3"
    assert [str(c.loc) for c in summarise.precondition] == ["d.yaml:13:20", "d.yaml:13:31"]
    assert str(summarise.parameters[0].loc) == "d.yaml:12:18"
    assert str(domain.predicates[3].loc) == "d.yaml:9:3"
    publish = domain.tasks[0]
    assert str(publish.loc) == "d.yaml:22:3"
    assert str(publish.methods[1].loc) == "d.yaml:28:9"
    call = publish.methods[0].network.items[1]
    assert isinstance(call, TaskCall)
    assert str(call.loc) == "d.yaml:27:34"
    assert str(domain.goals[0].loc) == "d.yaml:37:3"


def test_json_domain_gives_the_same_model_as_yaml() -> None:
    folder = EXAMPLES / "doc-pipeline"
    from_yaml = parse_domain((folder / "domain.yaml").read_text(encoding="utf-8"))
    from_json = parse_domain((folder / "domain.json").read_text(encoding="utf-8"), syntax="json")
    assert from_json == from_yaml


def test_json_locations_point_into_the_json_text() -> None:
    text = (
        '{\n\t"domain": "x",\n\t"predicates": {"p": []},\n'
        '\t"actions": {"a": {"effect": ["p()"]}}\n}'
    )
    domain = parse_domain(text, file="d.json", syntax="json")
    assert str(domain.actions[0].effect[0].loc) == "d.json:4:32"


def test_json_numbers_in_exponent_form_are_costs() -> None:
    text = '{"domain": "x", "actions": {"a": {"cost": 2.5e1}}}'
    assert parse_domain(text, syntax="json").actions[0].cost == 25.0


def test_flow_list_literals_with_several_arguments_need_no_quotes() -> None:
    text = """\
domain: blocks
predicates: {on: [object, object], clear: [object]}
actions:
  stack:
    parameters: {x: object, y: object}
    precondition: [clear(x), on(x, y), x != y, clear(y)]
    effect: [on(y,
                x), not clear(x)]
"""
    action = parse_domain(text, file="b.yaml").actions[0]
    assert action.precondition == (
        lit("clear", "x"),
        lit("on", "x", "y"),
        Equality("x", "y", positive=False),
        lit("clear", "y"),
    )
    assert [str(c.loc) for c in action.precondition] == [
        "b.yaml:6:20",
        "b.yaml:6:30",
        "b.yaml:6:40",
        "b.yaml:6:48",
    ]
    assert action.effect == (lit("on", "y", "x"), lit("clear", "x", positive=False))


def test_predicate_named_on_is_a_name_not_a_yaml_boolean() -> None:
    domain = parse_domain("domain: b\npredicates:\n  on: [object, object]\n  yes: []\n")
    assert [p.name for p in domain.predicates] == ["on", "yes"]


def test_predicates_may_name_their_arguments() -> None:
    domain = parse_domain(
        "domain: b\ntypes: {block: object}\npredicates:\n  on: {x: block, y: block}\n"
    )
    assert domain.predicates[0].parameters == (TypedName("x", "block"), TypedName("y", "block"))


def test_constants_are_terms_of_every_literal() -> None:
    text = """\
domain: d
types: {room: object}
constants: {lobby: room}
predicates: {at: [room]}
actions:
  go:
    parameters: {r: room}
    precondition: [at(lobby), r != lobby]
    effect: [at(r), not at(lobby)]
"""
    domain = parse_domain(text)
    assert domain.constants == (TypedName("lobby", "room"),)
    assert domain.actions[0].precondition[1] == Equality("r", "lobby", positive=False)


def test_nested_parallel_blocks_and_method_parameters() -> None:
    text = """\
domain: d
types: {item: object}
predicates: {ready: [item], linked: [item, item]}
actions:
  make: {parameters: {i: item}, effect: [ready(i)]}
tasks:
  build:
    parameters: {a: item}
    methods:
      - name: with_partner
        parameters: {b: item}
        precondition: [linked(a, b)]
        subtasks:
          - make(a)
          - parallel: [[make(b), make(a)], make(b)]
          - make(a)
      - precondition: [ready(a)]
"""
    task = parse_domain(text).tasks[0]
    first, second = task.methods
    assert first.parameters == (TypedName("b", "item"),)
    assert first.network.items[1] == Parallel(
        (
            Ordered((TaskCall("make", ("b",)), TaskCall("make", ("a",)))),
            Ordered((TaskCall("make", ("b",)),)),
        )
    )
    assert second.name == "build_2"
    assert second.network == Ordered()


def test_merge_keys_and_anchors_work_as_in_yaml() -> None:
    text = """\
domain: d
types: {item: object}
predicates: {p: [item], q: [item]}
actions:
  a: &base
    parameters: {i: item}
    precondition: [p(i)]
    effect: [q(i)]
  b:
    <<: *base
    cost: 3
"""
    a, b = parse_domain(text).actions
    assert (b.parameters, b.precondition, b.effect) == (a.parameters, a.precondition, a.effect)
    assert b.cost == 3


def test_types_and_sections_may_be_empty() -> None:
    domain = parse_domain("domain: d\ntypes:\n  item:\npredicates:\nactions:\n")
    assert domain.types.parent("item") == "object"
    assert domain.actions == ()


def test_schema_key_is_accepted_and_ignored() -> None:
    domain = parse_domain(
        '{"$schema": "../schemas/domain.schema.json", "domain": "d"}', syntax="json"
    )
    assert domain.name == "d"


def test_lab_prep_example_has_types_costs_tiers_and_negative_preconditions() -> None:
    domain = parse_domain((EXAMPLES / "lab-prep" / "domain.yaml").read_text(encoding="utf-8"))
    assert domain.types.is_subtype("thermocycler", "instrument")
    tiers = {a.name: a.tier for a in domain.actions}
    assert tiers["scan_barcode"] is Tier.READ
    assert tiers["run_thermocycler"] is Tier.EXECUTE
    assert tiers["thaw"] is Tier.WRITE
    assert {a.name: a.cost for a in domain.actions}["run_thermocycler"] == 5
    pipette = domain.action("pipette")
    assert pipette is not None
    assert lit("sealed", "p", positive=False) in pipette.precondition
