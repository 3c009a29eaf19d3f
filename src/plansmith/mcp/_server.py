"""plansmith's own MCP server: plan, approve, run, status and report from any MCP host.

``build_face_server(service)`` builds an SDK ``MCPServer`` over a ``FaceService`` (the
engine's run table). Every tool has an output schema; every plansmith error becomes a
typed tool error (``ErrorType: message``, with its hint).
"""

# No `from __future__ import annotations`: the SDK evaluates the closures' annotations.

import contextlib
import dataclasses
import json
import os
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CreateMessageResult

from plansmith.domains.research.desk import ResearchService
from plansmith.errors import InputError, PlansmithError
from plansmith.mcp._ask_tools import add_ask_tools
from plansmith.mcp._describe import with_research_tools
from plansmith.mcp._hints import acts, reads
from plansmith.mcp._legacy_updates import Check, LegacySubscriptions
from plansmith.mcp._llm import repair_prompt, translation_prompt
from plansmith.mcp._openai import OpenAIConfig, openai_config
from plansmith.mcp._owner import Owners, tool_error
from plansmith.mcp._patch_tools import add_patch_tools
from plansmith.mcp._prompt import ask_research_prompt, plan_and_run_prompt, review_run_prompt
from plansmith.mcp._research_tools import add_research_tools
from plansmith.mcp._service import FaceService
from plansmith.mcp._translate import (
    check_answer,
    choose_translator,
    reply_text,
    sample,
    translation,
    via_openai,
)
from plansmith.mcp._types import (
    ApprovalResult,
    DomainInfo,
    DomainList,
    PlanResult,
    RunHandle,
    RunList,
    RunReport,
    RunStatus,
    Translation,
)
from plansmith.mcp._updates import RunUpdates

__all__ = ["build_face_server", "serve_face_http", "SessionInfo"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)  # no slots: the SDK reads class defaults for the schema
class SessionInfo:
    """``open_session``'s answer: the value to send, and the header to send it in."""

    session: str
    header: str


Translator = Literal["auto", "offline", "sampling", "openai"]
Reply = CreateMessageResult | None
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


async def _guard(work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    except PlansmithError as error:
        raise tool_error(error) from None


def build_face_server(
    service: FaceService,
    *,
    name: str = "plansmith",
    env: Mapping[str, str] | None = None,
    log_level: LogLevel = "WARNING",
    research: ResearchService | None = None,
    on_exit: Callable[[], Awaitable[None]] | None = None,
    background: Callable[[], Coroutine[Any, Any, None]] | None = None,
    session_secret: bytes | None = None,
) -> MCPServer:
    """The MCP server; ``env`` configures the OpenAI-compatible translator (see _openai).
    With ``research``, it also serves start_research, get_research_status and
    get_research_report (see _research_tools).

    The server's lifespan enters ``service`` (its run table) and ``research``: when it
    ends, the runs still in flight are cancelled (each records it) and waited for, and
    the research servers are stopped.

    ``on_exit`` is awaited (shielded from cancellation) when the server's lifespan ends:
    over stdio when the client closes the connection, over HTTP when the server shuts
    down, after the runs are cancelled (``plansmith mcp`` passes the warm servers'
    ``aclose``, which stops the tool servers the runs kept warm). ``background`` runs
    for the lifespan's length and is cancelled at its end (``plansmith mcp`` passes the
    engine's take-over loop when its run log is shared).

    Runs belong to their owner (see ``_owner``): ``open_session`` issues
    ``X-Plansmith-Session`` values signed with ``session_secret`` (default: random, for
    this server's life); an anonymous HTTP call may not own or read runs unless the
    service shares them (its ``share_runs``).

    Raises ``InputError`` when that configuration is incomplete.
    """
    openai: OpenAIConfig | None = openai_config(os.environ if env is None else env)
    bus = InMemorySubscriptionBus()  # subscriptions/listen: run progress (see _updates)
    owners = Owners(session_secret, shared=lambda: service.share_runs)
    legacy = LegacySubscriptions(bus, _subscribable(service, owners))  # resources/subscribe
    updates = RunUpdates(bus, legacy)
    server = MCPServer(
        name,
        version="0.1.0",
        instructions="Plan first, then act: make_plan, approve_plan, start_run, "
        "await_run (or get_run_status) until done, get_run_report. A run in state "
        "'awaiting answer' waits for a person: await_run asks the user (elicitation), "
        "or answer_question. See the prompt plan_and_run.",
        log_level=log_level,
        lifespan=_lifespan(service, research, on_exit, background, updates),
        subscriptions=bus,
    )
    legacy.install(server)

    def owner(ctx: Context) -> str:  # raises for an anonymous HTTP call (runs not shared)
        return owners.owner(ctx.headers, ctx.protocol_version)

    def label(ctx: Context) -> str:
        return owners.label(ctx.headers, ctx.protocol_version)

    def info(domain: str) -> DomainInfo:
        try:
            return service.describe_domain(domain)
        except PlansmithError as error:
            raise tool_error(error) from None

    async def first_sample(
        domain: str, request: str | None, translator: str, ctx: Context
    ) -> Sample | None:
        try:
            source = choose_translator(translator, request, ctx, openai)
        except PlansmithError as error:
            raise tool_error(error) from None
        if request is None or source != "sampling" or service.is_made(domain):
            return None  # a domain made by code: its scenario is chosen offline
        return sample(translation_prompt(info(domain), request))

    async def second_sample(
        domain: str,
        request: str | None,
        objects: dict[str, str] | None,
        init: list[str] | None,
        first: Annotated[Reply, Resolve(first_sample)],
    ) -> Sample | None:
        if first is None or request is None:
            return None
        checked = check_answer(service, domain, reply_text(first), objects, init)
        if checked.goal is not None:
            return None
        return sample(repair_prompt(info(domain), request, reply_text(first), str(checked.error)))

    async def translate(
        domain: str,
        request: str,
        source: str,
        *,
        objects: dict[str, str] | None,
        init: list[str] | None,
        replies: tuple[Reply, Reply],
    ) -> Translation | None:
        if source == "openai":
            if openai is None:
                raise InputError(
                    "translator 'openai' needs PLANSMITH_LLM_BASE_URL and PLANSMITH_LLM_MODEL",
                    hint="set them, or use translator='offline' or 'sampling'",
                )
            return await via_openai(service, openai, domain, request, objects=objects, init=init)
        if source != "sampling":
            return None
        errors: list[str] = []
        for calls, reply in enumerate(replies, start=1):
            if reply is None:
                break
            checked = check_answer(service, domain, reply_text(reply), objects, init)
            if checked.goal is not None:
                return translation("sampling", request, checked.goal, calls)
            errors.append(str(checked.error))
        raise InputError(
            f"the host model's goal was refused: {'; '.join(errors) or 'no answer'}",
            hint="rephrase the request, or pass goal=[...] yourself",
        )

    @server.tool(**reads("List domains"))
    async def list_domains() -> DomainList:
        """The domains plansmith serves, with their named goals and required servers."""
        listed = await _guard(lambda: _now(service.list_domains()))
        return listed if research is None else with_research_tools(listed, research.sources)

    @server.tool(**reads("Describe a domain"))
    async def describe_domain(name: str) -> DomainInfo:
        """A domain's actions (with tools and tiers), tasks, named goals, objects and servers."""
        return await _guard(lambda: _now(service.describe_domain(name)))

    @server.tool(**acts("Make a plan", destructive=False, idempotent=False, open_world=True))
    async def make_plan(  # noqa: PLR0917 - the SDK passes arguments by keyword
        domain: str,
        ctx: Context,
        first: Annotated[Reply, Resolve(first_sample)],
        second: Annotated[Reply, Resolve(second_sample)],
        goal: list[str] | None = None,
        tasks: list[str] | None = None,
        request: str | None = None,
        objects: dict[str, str] | None = None,
        init: list[str] | None = None,
        inputs: dict[str, str] | None = None,
        translator: Translator = "auto",
        costs: Literal["declared", "learned"] = "declared",
        after_run: str | None = None,
    ) -> PlanResult:
        """Plan for a goal (["pred(obj)", ...]), HTN tasks, or a natural-language request.

        ``inputs`` names the files a domain takes (describe_domain lists them, e.g. bio:
        {"gene": "data/gene.fasta", "family": "family.fasta"}); a request may name them
        instead ("GC and ORF summary of data/gene.fasta"). Returns the plan hash, steps,
        Mermaid DAG, tiers needing approval and a binding check against the live servers;
        or, when the request is ambiguous, the candidates and why. ``costs="learned"``:
        plan with action costs learned from the run log (A* with LM-cut; the run keeps
        them for its replans). ``after_run``: a finished run of this domain to follow up:
        the new goal is planned from its final state, and its outputs are read by
        reference, not made again.
        """

        async def work() -> PlanResult:
            await ctx.report_progress(0, 3, message="translating")
            source = choose_translator(translator, request, ctx, openai)
            given: Translation | None = None
            if request is not None and source is not None and not service.is_made(domain):
                given = await translate(
                    domain, request, source, objects=objects, init=init, replies=(first, second)
                )
            if given is not None and not given.goal and not given.tasks:  # the model: no goal
                await ctx.report_progress(3, 3, message="needs_choice")
                return PlanResult("needs_choice", domain, given)
            await ctx.report_progress(1, 3, message="planning and checking bindings")
            result = await service.make_plan(
                domain,
                goal=given.goal if given else tuple(goal or ()),
                tasks=given.tasks if given else tuple(tasks or ()),
                request=request,
                objects=objects,
                init=init,
                inputs=inputs,
                translation=given,
                owner=label(ctx),
                costs=costs,
                after_run=after_run,
            )
            await ctx.report_progress(3, 3, message=result.status)
            return result

        return await _guard(work)

    @server.tool(**acts("Approve a plan", destructive=False, idempotent=True, open_world=False))
    async def approve_plan(plan_hash: str, ctx: Context) -> ApprovalResult:
        """Approve a plan by its hash (needed before a plan with write/execute steps runs)."""
        return await _guard(lambda: _now(service.approve_plan(plan_hash, owner=label(ctx))))

    @server.tool(**acts("Start a run", destructive=True, idempotent=True, open_world=True))
    async def start_run(plan_hash: str, ctx: Context) -> RunHandle:
        """Start running an approved plan; returns a run id at once (then await_run, or
        poll get_run_status)."""
        handle = await _guard(lambda: service.start_run(plan_hash, owner=owner(ctx)))
        updates.follow(service.table, handle.run_id)  # plansmith://runs/{id} updates
        return handle

    @server.tool(**reads("Run status"))
    async def get_run_status(run_id: str, ctx: Context) -> RunStatus:
        """State, steps done of total, percent, steps in flight, failures and replans."""
        return await _guard(lambda: _now(service.get_run_status(run_id, owner=owner(ctx))))

    @server.tool(**reads("Run report"))
    async def get_run_report(run_id: str, ctx: Context) -> RunReport:
        """The run's report, as Markdown and as JSON."""
        return await _guard(lambda: _now(service.get_run_report(run_id, owner=owner(ctx))))

    @server.tool(**acts("Cancel a run", destructive=True, idempotent=True, open_world=False))
    async def cancel_run(run_id: str, ctx: Context) -> RunStatus:
        """Cancel a run of this session."""
        return await _guard(lambda: service.cancel_run(run_id, owner=owner(ctx)))

    @server.tool(**reads("List runs"))
    async def list_runs(ctx: Context) -> RunList:
        """This session's runs, newest first."""
        return await _guard(lambda: _now(service.list_runs(owner=owner(ctx))))

    @server.tool(**acts("Open a session", destructive=False, idempotent=False, open_world=False))
    async def open_session() -> SessionInfo:
        """A new session for HTTP clients: send `session` as the X-Plansmith-Session
        header on every later request; the runs you start then are yours alone."""
        return SessionInfo(session=owners.issue(), header="X-Plansmith-Session")

    add_ask_tools(  # await_run, answer_question: a person's answers to ask steps
        server, service, owners, follow=lambda run_id: updates.follow(service.table, run_id)
    )
    _resources(server, service, owners)
    if research is not None:
        add_research_tools(server, research, owners, openai=openai)
    add_patch_tools(server, service.patches, openai, owners)  # draft_patch
    server.prompt(name="plan_and_run")(plan_and_run_prompt)
    server.prompt(name="review_run")(review_run_prompt)
    if research is not None:
        server.prompt(name="ask_research")(ask_research_prompt)
    return server


def _lifespan(
    service: FaceService,
    research: ResearchService | None,
    on_exit: Callable[[], Awaitable[None]] | None,
    background: Callable[[], Coroutine[Any, Any, None]] | None = None,
    updates: RunUpdates | None = None,
) -> Callable[[MCPServer], contextlib.AbstractAsyncContextManager[dict[str, Any]]]:
    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        try:
            async with (
                service,  # its run table: open while the face serves, its runs cancelled after
                research or contextlib.nullcontext(),  # then the research servers stopped
                anyio.create_task_group() as tg,
            ):
                if background is not None:
                    tg.start_soon(background)
                if updates is not None:
                    updates.start(tg)
                try:
                    yield {}
                finally:
                    tg.cancel_scope.cancel()
        finally:
            if on_exit is not None:
                with anyio.CancelScope(shield=True):
                    await on_exit()

    return lifespan


async def _now(value: T) -> T:
    return value


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=_plain)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(type(value).__name__)


def _resources(server: MCPServer, service: FaceService, owners: Owners) -> None:
    def read(work: Callable[[], Any]) -> str:
        try:
            return _json(work())
        except PlansmithError as error:  # the client gets -32602 with this message
            raise ResourceNotFoundError(f"{type(error).__name__}: {error}") from None

    @server.resource("plansmith://domains/{name}", mime_type="application/json")
    def domain_resource(name: str) -> str:
        return read(lambda: service.describe_domain(name))

    @server.resource("plansmith://plans/{plan_hash}", mime_type="application/json")
    def plan_resource(plan_hash: str) -> str:
        return read(lambda: service.plan_document(plan_hash))

    @server.resource("plansmith://runs/{run_id}/events", mime_type="application/json")
    def run_events_resource(run_id: str, ctx: Context) -> str:
        return read(
            lambda: service.run_events(
                run_id, owner=owners.owner(ctx.headers, ctx.protocol_version)
            )
        )

    @server.resource("plansmith://runs/{run_id}", mime_type="application/json")
    def run_resource(run_id: str, ctx: Context) -> str:
        return read(
            lambda: (
                service.get_run_report(
                    run_id, owner=owners.owner(ctx.headers, ctx.protocol_version)
                ).report
            )
        )


_RUN_URI = re.compile(r"plansmith://runs/(?P<run_id>[^/]+)(?:/events)?")
_DOMAIN_URI = re.compile(r"plansmith://domains/(?P<name>[^/]+)")
_PLAN_URI = re.compile(r"plansmith://plans/(?P<plan_hash>[^/]+)")


def _subscribable(service: FaceService, owners: Owners) -> Check:
    """What ``resources/subscribe`` accepts: a resource the caller may read. A run's
    (``plansmith://runs/{id}``, ``.../events``) is updated as the run goes on; a
    domain's or a plan's never changes (subscribing to one is allowed, and quiet)."""

    def check(ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        headers: Mapping[str, str] | None = getattr(ctx.request, "headers", None)
        try:
            if run := _RUN_URI.fullmatch(uri):
                owner = owners.owner(headers, ctx.protocol_version)
                service.get_run_status(run["run_id"], owner=owner)
            elif domain := _DOMAIN_URI.fullmatch(uri):
                service.describe_domain(domain["name"])
            elif plan := _PLAN_URI.fullmatch(uri):
                service.plan_document(plan["plan_hash"])
            else:
                raise InputError(
                    f"unknown resource {uri!r}",
                    hint="subscribe to plansmith://runs/{run_id} or plansmith://runs/{run_id}/events",
                )
        except PlansmithError as error:  # as a read of it: -32602 with this message
            raise MCPError(INVALID_PARAMS, f"{type(error).__name__}: {error}") from None

    return check


def serve_face_http(server: MCPServer, sock: socket.socket, host: str) -> None:
    """Serve ``server`` over streamable HTTP at ``/mcp`` on ``sock`` (bound to ``host``
    and listening) until interrupted: what ``server.run("streamable-http")`` does, on a
    socket the caller opened, so that it can say where it listens before it starts."""
    import uvicorn  # noqa: PLC0415 - only the HTTP transport needs it

    app = server.streamable_http_app(host=host)  # DNS-rebinding checks as for run()
    config = uvicorn.Config(app, log_level=server.settings.log_level.lower())
    uvicorn.Server(config).run(sockets=[sock])
