"""The research run's tools: the desk's, and each source's search, as a ``ToolInvoker``.

:data:`BINDINGS_FILE` binds the research domain's actions; :func:`desk_catalog`
is the catalog they are bound against (the desk's tools and the ``corpus``
placeholder's ``search``); :func:`route_searches` gives each bound search step
the server of its source; :class:`DeskInvoker` carries the calls out.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from plansmith.binding import BoundPlan, ToolCatalog, ToolSpec
from plansmith.domains.research import DOMAIN_DIR
from plansmith.domains.research.desk._desk import ResearchDesk
from plansmith.errors import ToolCallError
from plansmith.execution import ErrorClass, ToolCall, ToolResult
from plansmith.model import JSONValue

__all__ = ["BINDINGS_FILE", "DESK", "CORPUS", "desk_catalog", "route_searches", "DeskInvoker"]

BINDINGS_FILE = DOMAIN_DIR / "bindings.yaml"
DESK = "desk"
CORPUS = "corpus"


def _schema(*names: str) -> dict[str, JSONValue]:
    props: dict[str, JSONValue] = {n: {"type": "string"} for n in names}
    return {"type": "object", "properties": props, "required": list(names)}


def desk_catalog() -> ToolCatalog:
    """The tools research steps are bound against."""
    desk = (
        ToolSpec("weigh", _schema("subquestion", "question")),
        ToolSpec("verify", _schema("question")),
        ToolSpec("compare", _schema("question")),
        ToolSpec("recommend", _schema("question")),
        ToolSpec("write_report", _schema("question", "out")),
    )
    corpus = (ToolSpec("search", _schema("subquestion", "source")),)
    return ToolCatalog(((DESK, desk), (CORPUS, corpus)))


def route_searches(bound: BoundPlan, sources: dict[str, str]) -> BoundPlan:
    """``bound`` with every ``corpus`` step on the server of its ``src`` (object ->
    source name); the runner's per-server limits and events then name the source."""
    steps = []
    for s in bound.steps:
        if s.server == CORPUS:
            src = dict(s.params).get("src")  # an object name: the domain is declarative
            if isinstance(src, str):
                s = replace(s, server=sources.get(src, s.server))
        steps.append(s)
    return replace(bound, steps=tuple(steps))


def _result(data: dict[str, Any]) -> ToolResult:
    return ToolResult(structured=data, text=json.dumps(data, sort_keys=True))


class DeskInvoker:
    """Runs the desk's tools in process; a source server's ``search`` goes to the desk,
    which asks the source (through the server pool) within the budget and quotas."""

    def __init__(self, desk: ResearchDesk) -> None:
        self.desk = desk

    async def invoke(self, call: ToolCall) -> ToolResult:
        desk, args = self.desk, call.arguments
        if call.server in desk.sources.values() and call.tool == "search":
            src = str(args.get("source", ""))
            return _result(await desk.search(str(args["subquestion"]), src, call.key, call.step))
        if call.server != DESK:
            raise ToolCallError(
                ErrorClass.PROTOCOL_ERROR, f"no research tool {call.tool!r} on {call.server!r}"
            )
        if call.tool == "weigh":
            return _result(desk.weigh(str(args["subquestion"])))
        if call.tool == "verify":
            return _result(await desk.verify(call.key, call.step))
        if call.tool in ("compare", "recommend"):
            section = "Comparison" if call.tool == "compare" else "Conclusions and recommendations"
            return _result({"sections": [section]})
        if call.tool == "write_report":
            out = args.get("out")
            return _result(desk.write_report(Path(str(out)) if out else None))
        raise ToolCallError(ErrorClass.PROTOCOL_ERROR, f"the desk has no tool {call.tool!r}")
