"""Research tools of plansmith's MCP server: ``start_research`` returns an id at once;
``get_research_status`` and ``get_research_report`` follow the run.

``add_research_tools(server, research)`` adds them to the face over the research desk's
``ResearchService`` (``plansmith.domains.research.desk``).
"""

# No `from __future__ import annotations`: the SDK evaluates the closures' annotations.

from mcp.server.mcpserver import Context, MCPServer

from plansmith.domains.research.desk import (
    ResearchHandle,
    ResearchReport,
    ResearchService,
    ResearchStatus,
)
from plansmith.errors import PlansmithError
from plansmith.mcp._hints import acts, reads
from plansmith.mcp._owner import Owners, tool_error

__all__ = ["add_research_tools"]


def add_research_tools(
    server: MCPServer, research: ResearchService, owners: Owners | None = None
) -> None:
    """Add ``start_research``, ``get_research_status`` and ``get_research_report``;
    ``owners`` tells who a call is (default: nothing shared, no sessions issued)."""
    who = owners or Owners()

    def owner_of(ctx: Context) -> str:
        return who.owner(ctx.headers, ctx.protocol_version)

    @server.tool(**acts("Start research", destructive=False, idempotent=False, open_world=False))
    async def start_research(  # noqa: PLR0917 - the SDK passes arguments by keyword
        question: str,
        ctx: Context,
        sources: list[str] | None = None,
        max_depth: int | None = None,
        budget: dict[str, float] | None = None,
        subquestions: list[str] | None = None,
    ) -> ResearchHandle:
        """Research a question over the document sources; returns a run id at once.

        sources: source names (default: all); max_depth: passages read per search
        (1-8, default 3); budget: max_subtasks, max_searches, max_seconds;
        subquestions: extra subquestions (yours), kept or dropped by the rule filter.
        Poll get_research_status, then get_research_report.
        """
        try:
            return research.start_research(
                question,
                sources=sources,
                max_depth=max_depth,
                budget=budget,
                extra=tuple(subquestions or ()),
                owner=owner_of(ctx),
            )
        except PlansmithError as error:
            raise tool_error(error) from None

    @server.tool(**reads("Research status"))
    async def get_research_status(run_id: str, ctx: Context) -> ResearchStatus:
        """State, plan steps done, searches and seconds used, coverage limited or not."""
        try:
            return research.get_research_status(run_id, owner=owner_of(ctx))
        except PlansmithError as error:
            raise tool_error(error) from None

    @server.tool(**reads("Research report"))
    async def get_research_report(
        run_id: str, ctx: Context, include_trace: bool = True
    ) -> ResearchReport:
        """The cited report (Markdown); with include_trace, the whole trace (JSON)."""
        try:
            return research.get_research_report(run_id, owner=owner_of(ctx), trace=include_trace)
        except PlansmithError as error:
            raise tool_error(error) from None
