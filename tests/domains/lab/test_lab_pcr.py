"""The flex-pcr domain: its problems, its bindings to plansmith-lab, its servers, its plans."""

from __future__ import annotations

import inspect
import json
from collections import Counter

import pytest
from _labclient import labtools

from plansmith.binding import ParamRef, find_refs, load_bindings
from plansmith.domains.lab import (
    BATCH,
    PCR_BINDINGS,
    PCR_DOMAIN,
    PCR_SERVERS,
    SERVER_SCRIPT,
    problem_for,
    units_for,
)
from plansmith.formats import load_domain, parse_problem
from plansmith.model import Domain, Plan

ROLES = ("movement", "liquid", "modules")


@pytest.fixture(scope="module")
def domain() -> Domain:
    return load_domain(PCR_DOMAIN)


def test_units_are_wells_for_one_channel_and_columns_for_eight() -> None:
    assert units_for(10, 1) == ["A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "A2", "B2"]
    assert units_for(10, 8) == ["A1", "A2"]
    assert units_for(96, 8) == [f"A{c}" for c in range(1, 13)]
    assert units_for(96, 1)[-1] == "H12"
    assert len(set(units_for(96, 1))) == 96


@pytest.mark.parametrize(
    ("samples", "channels", "cycles", "message"),
    [
        (0, 8, 30, "samples must be 1 to 96"),
        (97, 1, 30, "samples must be 1 to 96"),
        (8, 2, 30, "channels must be 1 or 8"),
        (8, 8, 0, "cycles must be 1 to 99"),
        (8, 8, 100, "cycles must be 1 to 99"),
    ],
)
def test_problem_for_refuses_what_a_plate_or_a_pipette_cannot_do(
    samples: int, channels: int, cycles: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        problem_for(samples, channels, cycles)


@pytest.mark.parametrize(
    ("samples", "channels"), [(1, 1), (4, 1), (8, 8), (13, 8), (17, 1), (96, 1), (96, 8)]
)
def test_problems_fit_the_domain(domain: Domain, samples: int, channels: int) -> None:
    problem = parse_problem(problem_for(samples, channels, 35), domain)
    units = units_for(samples, channels)
    names = {o.name: o.type for o in problem.objects}
    assert [n for n, t in names.items() if t == "unit"] == units
    assert names["35"] == "count"
    assert names[f"flex_{channels}channel_1000"] == "model"
    assert [str(t) for t in problem.tasks] == ["prepare_pcr(p1000, A1, 35)"]
    facts = Counter(a.predicate for a in problem.init)
    assert (facts["next"], facts["last"]) == (len(units) - 1, 1)
    assert facts["batch_end"] == (len(units) - 1) // BATCH


def test_every_action_is_bound_to_a_tool_of_its_role(domain: Domain) -> None:
    bindings = load_bindings(PCR_BINDINGS)
    tools = labtools()
    assert sorted(b.action for b in bindings.bindings) == sorted(a.name for a in domain.actions)
    for binding in bindings.bindings:
        assert binding.server in ROLES, binding.action
        offered = {t.name: t for t in tools.tools_for(binding.server)}
        assert binding.tool in offered, f"{binding.action}: {binding.server} has no {binding.tool}"
        signature = offered[binding.tool].signature
        assert isinstance(binding.arguments, dict)
        given = set(binding.arguments)
        required = {
            n for n, p in signature.parameters.items() if p.default is inspect.Parameter.empty
        }
        assert required <= given <= set(signature.parameters), binding.action
        action = domain.action(binding.action)
        assert action is not None
        params = {p.name for p in action.parameters}
        for text, ref in find_refs(binding.arguments):
            assert isinstance(ref, ParamRef), text
            assert ref.name in params, f"{binding.action}: ${{{text}}}"
        assert binding.policy.idempotent, binding.action


def test_servers_json_starts_the_three_roles_over_one_robot() -> None:
    servers = json.loads(PCR_SERVERS.read_text(encoding="utf-8"))["mcpServers"]
    assert sorted(servers) == sorted(ROLES)
    robots = set()
    for role, entry in servers.items():
        # the launcher beside plansmith's python: it finds (or builds) the lab venv and
        # runs the installed package's server.py with it, from any directory
        assert entry["command"] == "plansmith-lab"
        options = entry["args"]
        assert options[options.index("--role") + 1] == role
        robots.add(options[options.index("--robot") + 1])
    assert len(robots) == 1


def test_plansmith_lab_is_the_launcher_of_the_server_script() -> None:
    from importlib.metadata import entry_points

    from plansmith.domains.lab import _launch

    (script,) = entry_points(group="console_scripts", name="plansmith-lab")
    assert script.value == "plansmith.domains.lab._launch:main"
    assert _launch.SERVER_SCRIPT == SERVER_SCRIPT
    assert _launch._split(["--lab-python", "/x/python", "--role", "liquid"]) == (
        "/x/python",
        ["--role", "liquid"],
    )
    assert _launch._split(["--lab-python=/y", "--robot", "r"]) == ("/y", ["--robot", "r"])


def test_the_server_script_imports_nothing_but_the_standard_library() -> None:
    source = SERVER_SCRIPT.read_text(encoding="utf-8")
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    modules = {line.split()[1].split(".")[0] for line in top_level}
    assert modules <= {
        "__future__",
        "argparse",
        "collections",
        "contextlib",
        "os",
        "shutil",
        "sys",
        "tempfile",
        "warnings",
        "pathlib",
    }


# --- plans (need the HTN planner) --------------------------------------------------------


def _plan(domain: Domain, samples: int, channels: int, cycles: int = 35) -> Plan:
    try:
        from plansmith.planning.htn import plan_htn  # noqa: F401
    except ImportError:
        pytest.skip("the HTN planner (plansmith.planning.htn.plan_htn) is not in this tree yet")
    from plansmith.planning._planner import plan

    return plan(parse_problem(problem_for(samples, channels, cycles), domain))


def test_eight_channels_prepare_96_samples_in_a_sixth_of_the_papers_611_steps(
    domain: Domain,
) -> None:
    eight = _plan(domain, 96, 8)
    one = _plan(domain, 96, 1)
    assert len(eight.steps) == 99
    assert len(eight.steps) * 6 < 611
    assert len(one.steps) == 623
    counts = Counter(s.action for s in eight.steps)
    assert (counts["aspirate_sample"], counts["pick_up_tip"], counts["aspirate_mastermix"]) == (
        12,
        13,
        2,
    )
    assert [s.args for s in eight.steps if s.action == "run_cycles"] == [
        ("thermocycler", "pcr_plate", "35")
    ]


def test_the_deck_set_up_and_the_lid_heating_run_in_parallel_branches(domain: Domain) -> None:
    steps = _plan(domain, 16, 8).steps
    ancestors: dict[str, set[str]] = {}
    for step in steps:  # steps come in a topological order
        ancestors[step.id] = set(step.after).union(*(ancestors[a] for a in step.after))

    def first(action: str, *args: str) -> str:
        return next(s.id for s in steps if s.action == action and s.args[: len(args)] == args)

    def unordered(a: str, b: str) -> bool:
        return a not in ancestors[b] and b not in ancestors[a]

    assert unordered(
        first("load_module", "thermocycler"), first("load_module", "temperature_module")
    )
    assert unordered(first("heat_lid"), first("aspirate_sample"))
    assert first("dispense_sample") in ancestors[first("close_lid")]
