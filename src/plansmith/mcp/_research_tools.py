"""Research tools of plansmith's MCP server: ``start_research`` returns an id at once;
``get_research_status`` and ``get_research_report`` follow the run;
``explain_research_conflicts`` asks the host's model (MCP sampling), once, after a run,
to explain the conflicts its verifier flagged.

A run makes two model calls at most (``use_model=False``: none). With an
OpenAI-compatible endpoint configured (``PLANSMITH_LLM_BASE_URL``, as for translation),
``start_research`` asks it for more subquestions, and the run asks it once more, right
after its verification, to explain the flagged conflicts. Without one, and with a
client that samples, ``start_research`` asks the host's model for the subquestions
(a ``Resolve(Sample)`` resolver), and ``explain_research_conflicts`` for the
explanation. Proposed subquestions go through the rule filter (facet ``model``); the
explanation lands in the report under "Model's explanation (not verified)"; both count
in the run's ``llm_calls``.

``add_research_tools(server, research)`` adds them to the face over the research desk's
``ResearchService`` (``plansmith.domains.research.desk``).
"""

# No `from __future__ import annotations`: the SDK evaluates the closures' annotations.

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

from plansmith.domains.research import (
    EXPLAIN_SYSTEM_PROMPT,
    PROPOSE_SYSTEM_PROMPT,
    ModelText,
    read_proposals,
)
from plansmith.domains.research.desk import (
    LimitSettings,
    ResearchHandle,
    ResearchReport,
    ResearchService,
    ResearchStatus,
    limit_settings,
)
from plansmith.errors import BusyError, InputError, Location, PlansmithError
from plansmith.mcp._hints import acts, reads
from plansmith.mcp._openai import OpenAIConfig, openai_model
from plansmith.mcp._owner import Owners, tool_error
from plansmith.mcp._translate import reply_text

Reply = CreateMessageResult | None
#: the longest explanation kept from the host's model (characters)
_MAX_TEXT = 4000

__all__ = ["add_research_tools"]


def add_research_tools(
    server: MCPServer,
    research: ResearchService,
    owners: Owners | None = None,
    *,
    openai: OpenAIConfig | None = None,
) -> None:
    """Add ``start_research``, ``get_research_status``, ``get_research_report`` and
    ``explain_research_conflicts``; ``owners`` tells who a call is (default: nothing
    shared, no sessions issued); ``openai``: the endpoint that explains each run's
    flagged conflicts (see the module)."""
    who = owners or Owners()

    def owner_of(ctx: Context) -> str:
        return who.owner(ctx.headers, ctx.protocol_version)

    def can_sample(ctx: Context) -> bool:
        caps = ctx.client_capabilities
        return caps is not None and caps.sampling is not None

    def sample(prompt: str, system: str) -> Sample:
        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        return Sample([message], max_tokens=600, system_prompt=system, temperature=0)

    def limits_of(
        rate: str | dict[str, str] | None,
        breaker_failures: int | None,
        breaker_cooldown: float | None,
    ) -> LimitSettings:
        return limit_settings(
            list(research.sources),
            rate=rate,
            breaker_failures=breaker_failures,
            breaker_cooldown=breaker_cooldown,
        )

    async def propose_sample(  # noqa: PLR0917 - the SDK passes arguments by keyword
        question: str,
        ctx: Context,
        use_model: bool = True,
        rate: str | dict[str, str] | None = None,
        breaker_failures: int | None = None,
        breaker_cooldown: float | None = None,
    ) -> Sample | None:
        """The host's model proposes subquestions (no endpoint configured, the client
        samples, the request is valid: else no call)."""
        if not use_model or openai is not None or not can_sample(ctx):
            return None
        try:
            limits_of(rate, breaker_failures, breaker_cooldown)
            prompt = research.proposal_request(question)
        except PlansmithError:
            return None  # refused by the tool itself, with no model asked
        return sample(prompt, PROPOSE_SYSTEM_PROMPT)

    # open world: with a model (an endpoint, the host's), a run asks it
    @server.tool(**acts("Start research", destructive=False, idempotent=False, open_world=True))
    async def start_research(  # noqa: PLR0917 - the SDK passes arguments by keyword
        question: str,
        ctx: Context,
        proposals: Annotated[Reply, Resolve(propose_sample)],
        sources: list[str] | None = None,
        max_depth: int | None = None,
        budget: dict[str, float] | None = None,
        subquestions: list[str] | None = None,
        rate: str | dict[str, str] | None = None,
        breaker_failures: int | None = None,
        breaker_cooldown: float | None = None,
        use_model: bool = True,
    ) -> ResearchHandle:
        """Research a question over the document sources; returns a run id at once.

        sources: source names (default: all); max_depth: passages read per search
        (1-8, default 3); budget: max_subtasks, max_searches, max_seconds;
        subquestions: extra subquestions (yours), kept or dropped by the rule filter;
        rate: this run's calls per time window, "5/s", "60/min" or "100 per 10 s" for
        every source, or {source: rate}; breaker_failures: failed calls in a row that
        open this run's circuit breaker of a source (0: none); breaker_cooldown: seconds
        before an open breaker lets a trial call through. These hold on top of the
        server's own limits (they only tighten them). use_model: with a model (the
        server's endpoint, else yours through sampling), one call proposes more
        subquestions (kept or dropped by the rules) and, with the endpoint, one more
        explains the conflicts flagged (model text, marked so); false: no model.
        Poll get_research_status, then get_research_report.
        """
        try:
            limits = limits_of(rate, breaker_failures, breaker_cooldown)
            proposed: tuple[str, ...] = ()
            calls = 0
            if proposals is not None:  # the host's model answered
                proposed, calls = read_proposals(reply_text(proposals)), 1
            elif use_model and openai is not None:
                research.proposal_request(question)  # a bad question asks no model
                proposed, _ = await research.model_proposals(question, openai_model(openai))
                calls = 1
            return research.start_research(
                question,
                sources=sources,
                max_depth=max_depth,
                budget=budget,
                extra=tuple(subquestions or ()),
                owner=owner_of(ctx),
                limits=limits,
                model=openai_model(openai) if openai is not None and use_model else None,
                model_via="openai",
                offline=not use_model,
                proposed=proposed,
                llm_calls=calls,
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

    async def explain_sample(run_id: str, ctx: Context) -> Sample | None:
        if not can_sample(ctx):
            return None
        try:
            prompt = research.explanation_request(run_id, owner=owner_of(ctx))
        except PlansmithError as error:
            raise tool_error(error) from None
        if prompt is None:
            return None
        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        return Sample([message], max_tokens=600, system_prompt=EXPLAIN_SYSTEM_PROMPT, temperature=0)

    @server.tool(
        **acts("Explain research conflicts", destructive=False, idempotent=True, open_world=True)
    )
    async def explain_research_conflicts(
        run_id: str,
        ctx: Context,
        reply: Annotated[Reply, Resolve(explain_sample)],
    ) -> ResearchReport:
        """Ask your model (sampling), once, to explain the conflicts a finished research
        run flagged; the report gets its text under "Model's explanation (not verified)"
        and counts the call in llm_calls. A run with no conflict, or explained already,
        is returned as it is, with no call."""
        try:
            owner = owner_of(ctx)
            if reply is not None:
                text = reply_text(reply).strip()[:_MAX_TEXT]
                said = ModelText("sampling", text, "" if text else "an empty answer")
                return research.add_explanation(run_id, said, owner=owner)
            status = research.get_research_status(run_id, owner=owner)
            if status.state in ("starting", "running"):
                raise BusyError(
                    f"research run {run_id} is still {status.state}",
                    hint="poll get_research_status until it is done, then ask again",
                )
            if research.explanation_request(run_id, owner=owner) is not None:
                raise InputError(
                    "explaining a run's conflicts needs a client that offers sampling",
                    location=Location(argument="run_id"),
                    hint="use a host with sampling, or start plansmith mcp with "
                    "PLANSMITH_LLM_BASE_URL and PLANSMITH_LLM_MODEL set (runs then ask it)",
                )
            return research.get_research_report(run_id, owner=owner)
        except PlansmithError as error:
            raise tool_error(error) from None
