"""The HTTP API: the engine's operations as JSON (domains, plan, check, runs, approve,
cancel, report) and each run's events as server-sent events."""

from __future__ import annotations

import hmac
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AfterValidator, BaseModel, Field, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException

from plansmith.domains.research import MAX_QUESTION_BYTES
from plansmith.errors import InputError, Location
from plansmith.execution import bound_to_dict, metrics_of, parse_time, parse_window
from plansmith.model import RUN_ID_MAX_LENGTH, RUN_ID_PATTERN, check_run_id
from plansmith.web._controller import Controller, Costs
from plansmith.web._errors import ERROR_RESPONSES, ErrorOut
from plansmith.web._goals import GoalChoice, goal_forms, input_forms
from plansmith.web._metrics import exposition, read_runs
from plansmith.web._report import run_report
from plansmith.web._sse import sse_stream
from plansmith.web._uploads import UPLOAD_OPENAPI, UPLOADS, receive_upload

__all__ = ["api_router", "metrics_router", "controller_of", "NAME_PATTERN", "RunIdText", "RunId"]

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"

Name = Annotated[str, Field(pattern=NAME_PATTERN, max_length=100)]


def _run_id(value: str) -> str:
    """``value`` if the engine's rule (``check_run_id``) takes it; else a validation
    error with the engine's message."""
    try:
        return check_run_id(value)
    except InputError as error:
        raise PydanticCustomError("run_id", "{message}", {"message": error.message}) from None


#: a run id: the engine's one rule checks it, the schema states it
RunIdText = Annotated[
    str,
    AfterValidator(_run_id),
    WithJsonSchema({"type": "string", "pattern": RUN_ID_PATTERN, "maxLength": RUN_ID_MAX_LENGTH}),
]
RunId = Annotated[RunIdText, Path()]


#: an input's value: a path (an uploaded file's, a folder's) or a number
InputValue = Annotated[str, Field(min_length=1, max_length=4096)]


class PlanRequest(BaseModel):
    """A problem of a domain of the domains folder, or one of its named goals with an
    object for each parameter (the objects and init of its default problem). ``inputs``
    (the domain's inputs by name: a file's or folder's path, a value) go with a goal,
    whose objects and init they then make, or alone, for a domain whose inputs make the
    whole job (the lab's PCR). ``costs``: the action costs to plan with, the domain's
    (``declared``) or the ones learned from the run log (``learned``: expected duration
    over success rate, the declared cost as the prior; a domain made from files)."""

    model_config = {"extra": "forbid"}
    domain: Name
    problem: Name | None = None
    goal: Name | None = None
    args: Annotated[dict[Name, Name], Field(max_length=32)] = {}
    inputs: Annotated[dict[Name, InputValue], Field(max_length=16)] = {}
    costs: Costs = "declared"

    @model_validator(mode="after")
    def _one_of_problem_or_goal(self) -> PlanRequest:
        if self.problem is not None and self.goal is not None:
            raise ValueError("give a problem or a goal (with args), not both")
        if self.problem is None and self.goal is None and not self.inputs:
            raise ValueError("give a problem or a goal (with args), or the domain's inputs")
        if self.goal is None and self.args:
            raise ValueError("args go with a goal, not with a problem or inputs alone")
        if self.problem is not None and self.inputs:
            raise ValueError("inputs go with a goal (or alone), not with a problem")
        return self

    def asked(self) -> str | GoalChoice:
        if self.problem is None:
            args, inputs = tuple(sorted(self.args.items())), tuple(sorted(self.inputs.items()))
            return GoalChoice(self.goal, args, inputs)
        return self.problem


class RunRequest(PlanRequest):
    """A run of a problem or goal (as ``PlanRequest``); ``after``: a finished run of the
    same domain it follows up (the run page's "continue from here"): planned from that
    run's final state, its steps read that run's outputs and do not call them again."""

    after: RunIdText | None = None


class ApproveRequest(BaseModel):
    model_config = {"extra": "forbid"}
    plan_hash: Annotated[str, Field(pattern=HASH_PATTERN)]


class AnswerRequest(BaseModel):
    """The answer to an ask step of a run that waits for it: ``step`` (its id, as the
    run's ``awaiting_answer`` lists it) and ``answer``, a JSON value its schema takes (a
    choice of an enum, true/false, a number, a string)."""

    model_config = {"extra": "forbid"}
    step: Annotated[str, Field(min_length=1, max_length=200)]
    answer: Annotated[
        Any, Field(description="a JSON value the step's answer schema takes"), WithJsonSchema({})
    ]


class CancelRequest(BaseModel):
    model_config = {"extra": "forbid"}
    reason: Annotated[str, Field(max_length=200)] = "cancelled from the web"


class ReadinessOut(BaseModel):
    """Whether the domain runs here; if not, why (``reason``) and what fixes it (``fix``)."""

    ready: bool
    reason: str
    fix: str
    notes: list[str]


class GoalParameterOut(BaseModel):
    name: str
    type: str
    choices: list[str]


class GoalOut(BaseModel):
    """A named goal: a form's fields, each with the objects that fit."""

    name: str
    description: str
    parameters: list[GoalParameterOut]


class InputOut(BaseModel):
    """An input the domain takes: a file (in one of ``formats``: upload it with POST
    /api/uploads and pass the path it returns), a folder (its path) or a value."""

    name: str
    description: str
    kind: Literal["file", "folder", "value"]
    formats: list[str]
    needed_by: list[str]


class DomainOut(BaseModel):
    name: str
    domain_file: str
    problems: list[str]
    runnable: bool
    kind: Literal["file", "gtpyhop", "made"]
    readiness: ReadinessOut
    goals: list[GoalOut]
    inputs: list[InputOut]


class UploadOut(BaseModel):
    """A stored upload: pass ``path`` as the value of a file input."""

    path: str
    name: str
    size: int
    sha256: str


class LearnedCostOut(BaseModel):
    """An action's cost learned from the run log: its ``declared`` cost, the ``cost``
    planned with, from ``calls`` calls in ``runs`` runs, and ``why`` (the figures)."""

    action: str
    declared: float
    cost: float
    calls: int
    runs: int
    why: str


class PlanOut(BaseModel):
    plan_hash: str
    steps: int
    plan: dict[str, Any]
    runnable: bool
    readiness: ReadinessOut
    costs: Costs = "declared"
    learned_costs: list[LearnedCostOut] = []


class CheckOut(BaseModel):
    plan_hash: str
    steps: int
    bound: dict[str, Any]


class RunAccepted(BaseModel):
    run_id: str
    status: str


def controller_of(request: Request) -> Controller:
    controller: Controller = request.app.state.controller
    return controller


_bearer = HTTPBearer(auto_error=False)


def _authorised(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """With a token set, require it as a bearer token (or ``?token=`` for EventSource)."""
    token = controller_of(request).settings.token
    if not token:
        return
    given = credentials.credentials if credentials else request.query_params.get("token", "")
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise HTTPException(401, "a valid bearer token is required", {"WWW-Authenticate": "Bearer"})


Ctl = Annotated[Controller, Depends(controller_of)]

api_router = APIRouter(
    prefix="/api", dependencies=[Depends(_authorised)], responses=ERROR_RESPONSES
)


@api_router.get("/domains", response_model=list[DomainOut], tags=["plans"])
async def list_domains(ctl: Ctl) -> list[dict[str, object]]:
    """The domains of the domains folder, with their problems, whether each runs here,
    its named goals as forms and the inputs it takes."""
    return [
        {**entry.to_dict(), "goals": goal_forms(entry), "inputs": input_forms(entry)}
        for entry in ctl.domains()
    ]


@api_router.post("/plan", response_model=PlanOut, tags=["plans"])
async def plan(body: PlanRequest, ctl: Ctl) -> dict[str, Any]:
    """Plan a problem (no servers are started): the plan JSON, its hash, and whether the
    domain can be run from here. With ``costs`` ``learned``, the costs learned from the
    run log that it was planned with (``learned_costs``: the actions with calls)."""
    result, learned = await ctl.costed_plan(body.domain, body.asked(), costs=body.costs)
    return {
        "plan_hash": result.hash,
        "steps": len(result.steps),
        "plan": result.to_dict(),
        "runnable": ctl.entry(body.domain).runnable,
        "readiness": ctl.entry(body.domain).readiness.to_dict(),
        "costs": body.costs,
        "learned_costs": [
            {
                "action": c.action,
                "declared": c.declared,
                "cost": c.cost,
                "calls": c.calls,
                "runs": c.runs,
                "why": c.why,
            }
            for c in learned
        ],
    }


@api_router.post("/check", response_model=CheckOut, tags=["plans"])
async def check(body: PlanRequest, ctl: Ctl) -> dict[str, Any]:
    """Plan, start the servers the bindings use, and bind every step (or say what fails)."""
    result, bound = await ctl.check(body.domain, body.asked(), costs=body.costs)
    return {"plan_hash": result.hash, "steps": len(result.steps), "bound": bound_to_dict(bound)}


@api_router.post("/runs", status_code=201, tags=["runs"])
async def create_run(body: RunRequest, ctl: Ctl) -> dict[str, Any]:
    """Plan, bind and record a run; it waits for approval of its plan hash. With
    ``after`` (a finished run of the same domain), a follow-up of that run."""
    run_id = await ctl.create_run(body.domain, body.asked(), after=body.after, costs=body.costs)
    return ctl.view(run_id).to_dict()


@api_router.post(
    "/uploads",
    status_code=201,
    response_model=UploadOut,
    tags=["plans"],
    responses={411: {"model": ErrorOut}, 413: {"model": ErrorOut}},
    openapi_extra=UPLOAD_OPENAPI,
)
async def upload(request: Request, ctl: Ctl) -> dict[str, Any]:
    """Store a file for a file input (multipart/form-data, its field ``file``, sent with
    the header ``X-Plansmith-Upload: 1``) under the home's ``uploads/``; pass the
    ``path`` it returns as the input's value. At most ``max_upload`` bytes."""
    folder = ctl.engine.home / UPLOADS
    stored = await receive_upload(request, folder, ctl.settings.max_upload)
    ctl.prune_uploads()  # the ones not used for upload_keep_days (this one was, now)
    return stored.to_dict()


@api_router.get("/runs", tags=["runs"])
async def list_runs(
    ctl: Ctl,
    limit: Annotated[int, Query(ge=1, le=1000, description="Runs in the page.")] = 50,
    before: Annotated[
        RunIdText | None,
        Query(description="Only runs older than this one: the last run of the page before."),
    ] = None,
) -> list[dict[str, Any]]:
    """The runs of the run log, newest first, a page at a time (``limit``, ``before``)."""
    return ctl.runs(limit, before)


@api_router.get("/runs/{run_id}", tags=["runs"])
async def run_detail(run_id: RunId, ctl: Ctl) -> dict[str, Any]:
    """A run: its status, bound plan, each step's state and timing, its replans."""
    return ctl.view(run_id).to_dict()


@api_router.post(
    "/runs/{run_id}/approve", status_code=202, response_model=RunAccepted, tags=["runs"]
)
async def approve(
    run_id: RunId, body: ApproveRequest, ctl: Ctl, request: Request
) -> dict[str, str]:
    """Approve the run's plan by its hash, and run it in the background; the run's log
    records the approver as ``web:`` and the client's address."""
    client = request.client.host if request.client is not None else "unknown"
    await ctl.approve(run_id, body.plan_hash, by=f"web:{client}")
    return {"run_id": run_id, "status": "running"}


@api_router.post(
    "/runs/{run_id}/answers", status_code=202, response_model=RunAccepted, tags=["runs"]
)
async def answer(run_id: RunId, body: AnswerRequest, ctl: Ctl, request: Request) -> dict[str, str]:
    """Answer an ask step of a run that waits for it (``awaiting answer``), and go on
    with the run in the background from its answer. An answer its schema refuses is a
    422 with the schema's reason (nothing is recorded, the run keeps waiting); a step
    that does not wait for one, or a finished run, a 409. The run's log records who
    answered as ``web:`` and the client's address."""
    client = request.client.host if request.client is not None else "unknown"
    await ctl.answer(run_id, body.step, body.answer, by=f"web:{client}")
    return {"run_id": run_id, "status": ctl.view(run_id).status}


@api_router.post(
    "/runs/{run_id}/cancel", status_code=202, response_model=RunAccepted, tags=["runs"]
)
async def cancel(run_id: RunId, ctl: Ctl, body: CancelRequest | None = None) -> dict[str, str]:
    """Cancel a run: steps in flight are cancelled and the run ends ``cancelled``."""
    await ctl.cancel(run_id, (body or CancelRequest()).reason)
    return {"run_id": run_id, "status": ctl.view(run_id).status}


@api_router.get("/runs/{run_id}/report", tags=["runs"])
async def report(run_id: RunId, ctl: Ctl) -> dict[str, Any]:
    """What ran where and how long it took, failures, retries and replans."""
    return run_report(ctl.view(run_id))


@api_router.get(
    "/runs/{run_id}/events",
    tags=["runs"],
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "The run's events."}},
)
async def events(
    run_id: RunId,
    ctl: Ctl,
    last_event_id: Annotated[int | None, Header(ge=0, le=2**53)] = None,
    after: Annotated[int | None, Query(ge=0, le=2**53)] = None,
) -> StreamingResponse:
    """The run's events as server-sent events (``id`` is the event's seq). Reconnect with
    ``Last-Event-ID`` (or ``?after=N``) to get the events after it; ends after
    ``RunFinished``."""
    feed = ctl.feed(run_id)
    start = last_event_id if last_event_id is not None else (after or 0)
    return StreamingResponse(
        sse_stream(feed, start),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


class ResearchRequest(BaseModel):
    """A question to research over the served sources (all of them by default)."""

    model_config = {"extra": "forbid"}
    question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_BYTES)]
    sources: Annotated[list[Name], Field(max_length=32)] | None = None


@api_router.get("/research", tags=["research"])
async def research_sources(ctl: Ctl) -> dict[str, Any]:
    """The sources research questions are answered over ([] when none is served)."""
    return {"sources": list(ctl.research.sources) if ctl.research is not None else []}


@api_router.post("/research", status_code=201, tags=["research"])
async def start_research(body: ResearchRequest, ctl: Ctl) -> dict[str, Any]:
    """Research a question: a run of the research domain (searches, evidence, the code
    verifier, a cited report); its id comes back at once. Follow it with GET
    /api/research/{run_id}, then read its report and trace."""
    research = ctl.research_service()
    await ctl.start()  # the run table and the research desk, in the app's event loop
    handle = research.start_research(body.question, sources=body.sources, owner="web")
    return asdict(handle)


@api_router.get("/research/{run_id}", tags=["research"])
async def research_status(run_id: RunId, ctl: Ctl) -> dict[str, Any]:
    """The research run's state, steps done, searches and seconds used."""
    return asdict(ctl.research_service().get_research_status(run_id, owner="web"))


@api_router.get("/research/{run_id}/report", tags=["research"])
async def research_report(run_id: RunId, ctl: Ctl) -> dict[str, Any]:
    """The cited report (Markdown) and the run's trace: its subquestions and the
    decisions on them, every search with its source and hits, the verdict on each claim,
    the conflicts and their follow-ups."""
    return asdict(ctl.research_service().get_research_report(run_id, owner="web", trace=True))


# -- run metrics: the stats page's JSON, and GET /metrics for Prometheus -----------------
# (both outside the OpenAPI schema: /metrics is Prometheus' text, and /api/metrics is the
# stats page's, as `plansmith stats --metrics --json` prints it)


@api_router.get("/metrics", include_in_schema=False)
async def run_metrics(
    ctl: Ctl,
    window: Annotated[str | None, Query(max_length=20)] = None,
    since: Annotated[str | None, Query(max_length=40)] = None,
) -> dict[str, Any]:
    """The run metrics of the log (``plansmith stats --metrics --json``): over every
    run, per domain with each tool's calls, and per ``window`` (``1h``, ``1d``, ``7d``)
    of the runs' creation times; ``since`` (an ISO time) keeps the runs created then or
    later; ``unreadable``: the runs left out because their events cannot be read."""
    window_s = None
    if window:
        try:
            window_s = parse_window(window)
        except ValueError as error:
            raise InputError(
                str(error), location=Location(argument="window"), hint="e.g. ?window=1d"
            ) from None
    since_at = parse_time(since) if since else None
    if since and since_at is None:
        raise InputError(
            f"{since!r} is not an ISO time",
            location=Location(argument="since"),
            hint="e.g. ?since=2026-01-31T09:00:00Z",
        )
    runs, unreadable = read_runs(ctl.engine.log)
    found = metrics_of(runs, since=since_at, window_s=window_s)
    return {**found.to_dict(), "unreadable": unreadable}


metrics_router = APIRouter(dependencies=[Depends(_authorised)], include_in_schema=False)


@metrics_router.get("/metrics")
async def prometheus_metrics(request: Request) -> Response:
    """The run metrics for Prometheus, read from the run log at each scrape: the text
    format, or OpenMetrics when the ``Accept`` header asks for it; the token as for
    ``/api`` (``Authorization: Bearer T``)."""
    body, content_type = exposition(
        request.app.state.metrics_registry, request.headers.get("accept", "")
    )
    return Response(body, media_type=content_type)
