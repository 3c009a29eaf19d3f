"""Arbitrary arguments never crash a server: every call answers a text (isError or not)
or a JSON-RPC error of the public server's codes, and the server answers the next call."""

from __future__ import annotations

import re
from typing import Any

import anyio
from drugtarget_calls import Answer, call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from plansmith.domains.drugtarget import SOURCES
from plansmith.domains.drugtarget._base import Reply, public
from plansmith.domains.drugtarget.server import answer, create_server

CODES = {-32601, -32602, -32603}
TOOLS = [(s, t["name"], t["inputSchema"]) for s in SOURCES for t in public(s)["tools"]]

# every source's tools are drawn from, KEGG's included (the default plan calls two)
assert {"find_related_entries", "get_pathway_info"} <= {t for s, t, _ in TOOLS if s == "kegg"}

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, str, dict[str, Any] | None]:
    """A tool of some server, with its schema's keys filled by arbitrary strings (mostly)
    or arbitrary JSON, some keys left out."""
    source, tool, schema = draw(st.sampled_from(TOOLS))
    if draw(st.integers(0, 20)) == 0:
        return source, tool, None
    args: dict[str, Any] = {}
    for key in schema.get("properties", {}):
        if draw(st.integers(0, 4)) == 0:
            continue
        args[key] = draw(st.text(max_size=40) if draw(st.booleans()) else json_values)
    return source, tool, args


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_answer_never_crashes(c: tuple[str, str, dict[str, Any] | None]) -> None:
    source, tool, args = c
    outcome = _outcome(source, tool, args)
    if isinstance(outcome, MCPError):
        assert outcome.code in CODES, outcome
        assert outcome.message  # "MCP error -326xx: ..." or a JavaScript TypeError's words
        return
    assert isinstance(outcome.text, str)
    # a Python exception of ours would be answered as "Error executing tool T: KeyError: ..."
    pattern = rf"Error executing tool {re.escape(tool)}: [A-Za-z]*(Error|Exception): "
    assert not re.match(pattern, outcome.text), outcome.text


def _outcome(source: str, tool: str, args: dict[str, Any] | None) -> Reply | MCPError:
    try:
        return answer(source, tool, args)
    except MCPError as error:
        return error


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls(), st.text(max_size=40))
def test_server_answers_arbitrary_queries_over_memory(
    c: tuple[str, str, dict[str, Any] | None], query: str
) -> None:
    source, tool, args = c

    async def go() -> tuple[Answer, Answer]:
        async with Client(create_server(source)) as client:
            first = await call(client, tool, args)
            after = await call(client, public(source)["tools"][0]["name"], {"query": query})
            return first, after

    first, after = anyio.run(go)
    for a in (first, after):
        assert a.code is None or a.code in CODES, a
