"""Bad arguments to every tool of the face, fuzzed: typed tool errors, never a crash."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

counter_url = fh.counter_url

# A plansmith error (``Type: message``) or the SDK's argument validation.
TYPED = re.compile(r"^Error executing tool \w+: (\w+Error: |\d+ validation errors? for )")

PARAMS: dict[str, tuple[str, ...]] = {
    "list_domains": (),
    "describe_domain": ("name",),
    "make_plan": ("domain", "goal", "tasks", "request", "objects", "init", "translator"),
    "approve_plan": ("plan_hash",),
    "start_run": ("plan_hash",),
    "get_run_status": ("run_id",),
    "get_run_report": ("run_id",),
    "cancel_run": ("run_id",),
    "list_runs": (),
    "draft_patch": ("run_id", "note", "branch", "drafter"),
    "open_session": (),
    "await_run": ("run_id", "wait_seconds"),
    "answer_question": ("run_id", "step", "answer"),
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
plausible = st.sampled_from(
    [
        *("docs", "doc-pipeline", "indexed(d1)", "indexd(d1", "sha256:00", "r-0", "", "index d1"),
        *("auto", "offline", "sampling", "openai"),
    ]
)
goals = st.lists(st.sampled_from(["indexed(d1)", "indexed(zz)", "not(", "x == y", "exists()"]))


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(PARAMS)))
    args: dict[str, Any] = {}
    for name in PARAMS[tool]:
        if draw(st.booleans()):
            args[name] = draw(plausible | json_values | goals)
    if draw(st.integers(0, 4)) == 0:
        args[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    return tool, args


@pytest.fixture(scope="module")
def face(counter_url: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from plansmith.mcp import build_face_server

    service = fh.make_service(tmp_path_factory.mktemp("fuzz"), url=counter_url)
    return build_face_server(service, env={})


async def _call(face: Any, tool: str, args: dict[str, Any]) -> tuple[Any, Any]:
    from mcp import Client

    async with Client(face) as client:
        result = await client.call_tool(tool, args)
        alive = await client.call_tool("list_domains", {})
    return result, alive


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(call=calls())
def test_bad_arguments_give_typed_tool_errors_and_the_server_keeps_serving(
    face: Any, call: tuple[str, dict[str, Any]]
) -> None:
    tool, args = call
    result, alive = anyio.run(_call, face, tool, args)
    assert not alive.is_error
    if result.is_error:
        text = result.content[0].text
        assert TYPED.match(text), text
        assert "Traceback" not in text
    else:
        assert result.structured_content is not None


words = st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=16)
atoms = st.builds(
    lambda p, a: f"{p}({', '.join(a)})",
    st.sampled_from(["indexed", "exists", "summarised", "nope"]),
    st.lists(st.sampled_from(["d0", "d1", "zz", ""]), max_size=2),
)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    goal=st.lists(atoms | words, max_size=3),
    tasks=st.lists(atoms | words, max_size=2),
    request=st.none() | words,
    objects=st.none() | st.dictionaries(words, st.sampled_from(["document", "object", "x"])),
    init=st.none() | st.lists(atoms | words, max_size=2),
)
def test_well_typed_but_wrong_plan_requests_give_typed_errors(  # noqa: PLR0917 - hypothesis
    face: Any,
    goal: list[str],
    tasks: list[str],
    request: str | None,
    objects: dict[str, str] | None,
    init: list[str] | None,
) -> None:
    args = {"domain": "docs", "goal": goal, "tasks": tasks, "request": request,
            "objects": objects, "init": init}  # fmt: skip
    result, alive = anyio.run(_call, face, "make_plan", args)
    assert not alive.is_error
    if result.is_error:
        assert re.match(r"^Error executing tool make_plan: [A-Z]\w+Error: ", result.content[0].text)
    else:
        assert result.structured_content["status"] in ("planned", "needs_choice")


def test_every_tool_is_fuzzed(tmp_path: Path) -> None:
    import asyncio

    from plansmith.mcp import build_face_server

    async def names() -> set[str]:
        from mcp import Client

        async with Client(build_face_server(fh.make_service(tmp_path), env={})) as c:
            return {t.name for t in (await c.list_tools()).tools}

    assert asyncio.run(names()) == set(PARAMS)
