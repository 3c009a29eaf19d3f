"""bindings.yaml and servers.json fit the domain and the live server's tools."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
import yaml
from mcp import Client

from plansmith.domains.bio import DOMAIN_DIR, problem_yaml
from plansmith.domains.bio._paths import Sandbox
from plansmith.domains.bio.server import create_server


def _tools(tmp_path: Path) -> dict[str, tuple[dict[str, object], dict[str, object] | None]]:
    async def go() -> dict[str, tuple[dict[str, object], dict[str, object] | None]]:
        async with Client(create_server(Sandbox.of([tmp_path], {}))) as client:
            listed = (await client.list_tools()).tools
        return {t.name: (t.input_schema, t.output_schema) for t in listed}

    return anyio.run(go)


def test_every_action_is_bound_to_a_tool_the_server_lists(tmp_path: Path) -> None:
    domain = yaml.safe_load((DOMAIN_DIR / "domain.yaml").read_text())
    bindings = yaml.safe_load((DOMAIN_DIR / "bindings.yaml").read_text())["bindings"]
    assert set(bindings) == set(domain["actions"])
    tools = _tools(tmp_path)
    for action, b in bindings.items():
        if domain["actions"][action].get("kind") == "ask":  # a person answers it
            asked = (b["server"], b["tool"], list(b["arguments"]))
            assert asked == ("plansmith", "ask", ["question"])
            continue
        assert b["server"] == "bio"
        schema, output = tools[b["tool"]]
        properties = schema["properties"]
        assert isinstance(properties, dict)
        assert set(b["arguments"]) <= set(properties), action
        assert output is not None, f"{b['tool']} has no output schema"


def test_every_tool_has_structured_output_naming_its_backend(tmp_path: Path) -> None:
    for name, (_, output) in _tools(tmp_path).items():
        assert output is not None, name
        props = output["properties"]
        assert name == "backends" or "backend" in props, name  # type: ignore[operator]


def test_servers_json_starts_the_server_module() -> None:
    config = json.loads((DOMAIN_DIR / "servers.json").read_text())
    bio = config["mcpServers"]["bio"]
    # the console script, found on PATH or beside plansmith's python (servers/_pool.py)
    assert (bio["command"], bio["args"]) == ("plansmith-bio", [])
    assert set(bio["env"]) == {"PLANSMITH_BIO_RUN_ROOT", "PLANSMITH_BIO_INPUTS"}


@pytest.mark.parametrize("available", [("blastn", "mafft", "clustalo", "fasttree"), ()])
def test_bindings_bind_the_full_report_plan(available: tuple[str, ...], tmp_path: Path) -> None:
    binding = pytest.importorskip("plansmith.binding")
    formats = pytest.importorskip("plansmith.formats")
    planning = pytest.importorskip("plansmith.planning")
    plan = planning.plan
    domain = formats.load_domain(DOMAIN_DIR / "domain.yaml")
    problem = formats.parse_problem(
        problem_yaml("full family report", {"gene": "g", "family": "f"}, available=available),
        domain,
    )
    result = plan(problem, planning.PlanOptions(search="astar"))
    specs = tuple(
        binding.ToolSpec(name, schema, output)
        for name, (schema, output) in _tools(tmp_path).items()
    )
    bound = binding.bind(
        result,
        domain,
        binding.load_bindings(DOMAIN_DIR / "bindings.yaml"),
        binding.ToolCatalog((("bio", specs),)),
    )
    assert [s.tool for s in bound.steps][-1] == "write_report"
    assert len(bound.steps) == len(result.steps)
