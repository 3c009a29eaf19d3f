"""The pages: HTML shells whose scripts (in ``static/``, written here, no CDN) fetch
the API and draw the plan, the run and the report."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

from plansmith.web._api import NAME_PATTERN, RunId
from plansmith.web._controller import Costs
from plansmith.web._html import html_page

__all__ = ["pages_router", "page"]

pages_router = APIRouter(include_in_schema=False)


def page(title: str, script: str, body: str, **data: str) -> HTMLResponse:
    """An HTML page that runs ``static/<script>.js``; ``data`` goes to ``<body data-*>``."""
    return html_page(title, body, scripts=("common", "dag", script), data=data)


NameQ = Annotated[str, Query(pattern=NAME_PATTERN, max_length=100)]

_PLAN_BODY = (
    '<section class="toolbar"><h1 id="title">plan</h1><span id="hash" class="mono"></span>'
    '<span id="summary"></span><span class="grow"></span>'
    '<button id="approve" class="primary" disabled>Approve</button>'
    '<button id="create" class="primary" hidden>Bind and create run</button></section>'
    '<p id="message" class="message" hidden></p>'
    # planned with learned costs: which, from how many runs (plan.js fills it)
    '<div id="costs" class="learned-costs" hidden></div>'
    '<div class="split"><div id="graph" class="graph"></div>'
    '<aside id="side"><h2>step</h2><div id="detail" class="detail">click a step</div>'
    '<h2>decomposition</h2><div id="tree" class="tree">none (not an HTN plan)</div></aside></div>'
)

_RUN_BODY = (
    '<section class="toolbar"><h1 id="title">run</h1>'
    '<span id="state" class="badge" role="status" aria-live="polite"></span>'
    '<span id="summary"></span><span class="grow"></span>'
    '<a id="after-link" hidden></a><a id="plan-link">plan</a><a id="report-link">report</a>'
    '<button id="cancel" class="danger" hidden disabled>Cancel</button></section>'
    '<div class="progress" id="progress" role="progressbar" aria-label="steps done"'
    ' aria-valuemin="0" aria-valuenow="0" aria-valuemax="0">'
    '<div id="bar"></div><span id="bar-label"></span></div>'
    '<p id="message" class="message" hidden></p>'
    # the run waits for a person's answer: a form per question (run.js draws them)
    '<section id="questions" class="questions" aria-label="questions" hidden></section>'
    '<p id="inherited" class="inherited" hidden></p>'
    # once the run ended: a follow-up of it, a goal of its domain from its final state
    '<form id="continue" class="toolbar continue" hidden>'
    '<label>continue from here: <select id="continue-goal"></select></label>'
    '<span id="continue-args"></span>'
    '<button id="continue-start" class="primary" type="submit">Continue from here</button>'
    "</form>"
    '<div class="legend" id="legend"></div>'
    '<div class="split"><div id="graph" class="graph"></div>'
    '<aside id="side"><h2>step</h2><div id="detail" class="detail">click a step</div></aside>'
    '</div><h2>timeline</h2><div id="timeline" class="timeline"></div>'
)


@pages_router.get("/", response_class=HTMLResponse)
async def index_page() -> HTMLResponse:
    body = '<h1>domains</h1><div id="domains">loading…</div>'
    return page("domains", "index", body)


@pages_router.get("/runs", response_class=HTMLResponse)
async def runs_page() -> HTMLResponse:
    return page("runs", "runs", '<h1>runs</h1><div id="runs">loading…</div>')


@pages_router.get("/plan", response_class=HTMLResponse)
async def plan_page(domain: NameQ, problem: NameQ, costs: Costs = "declared") -> HTMLResponse:
    """A problem's plan; ``costs=learned``: planned with the costs learned from the run
    log, which it lists (and "Bind and create run" makes its run with them)."""
    return page("plan", "plan", _PLAN_BODY, domain=domain, problem=problem, costs=costs)


@pages_router.get("/runs/{run_id}/plan", response_class=HTMLResponse)
async def run_plan_page(run_id: RunId) -> HTMLResponse:
    return page(f"plan of {run_id}", "plan", _PLAN_BODY, run_id=run_id)


@pages_router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_page(run_id: RunId) -> HTMLResponse:
    return page(f"run {run_id}", "run", _RUN_BODY, run_id=run_id)


@pages_router.get("/runs/{run_id}/report", response_class=HTMLResponse)
async def report_page(run_id: RunId) -> HTMLResponse:
    body = '<h1 id="title">report</h1><div id="report">loading…</div>'
    return page(f"report of {run_id}", "report", body, run_id=run_id)


_STATS_BODY = (
    '<section class="toolbar"><h1>stats</h1><span id="summary"></span>'
    '<span class="grow"></span><label>runs per <select id="window">'
    '<option value="1h">hour</option><option value="1d">day</option>'
    '<option value="7d">7 days</option></select></label></section>'
    '<p id="message" class="message" hidden></p>'
    '<div id="totals-box">loading…</div>'
    '<h2>runs per domain</h2><div id="domains-chart" class="timeline"></div>'
    '<h2>tool calls</h2><div id="tools-chart" class="timeline"></div>'
    '<h2>runs per window</h2><div id="windows-chart" class="timeline"></div>'
    '<h2>failures by error class</h2><div id="failures"></div>'
)


@pages_router.get("/stats", response_class=HTMLResponse)
async def stats_page() -> HTMLResponse:
    """The run metrics of the log (GET /api/metrics) as charts: runs per domain by
    outcome, each tool's calls, runs per time window (``?window=1h|1d|7d``), and the
    failures by error class."""
    return html_page("stats", _STATS_BODY, scripts=("common", "stats"))


_RESEARCH_BODY = (
    '<section class="toolbar"><h1 id="title">research</h1>'
    '<span id="state" class="badge" role="status" aria-live="polite"></span>'
    '<span id="summary"></span></section>'
    '<p id="question" class="question"></p><p id="message" class="message" hidden></p>'
    '<div id="trace"></div><h2>report</h2><pre id="report" class="report">…</pre>'
)


@pages_router.get("/research/{run_id}", response_class=HTMLResponse)
async def research_page(run_id: RunId) -> HTMLResponse:
    """A research run: its state while it runs, then its trace (subquestions and the
    decisions on them, searches, verdicts, conflicts, follow-ups) and its report."""
    return page(f"research {run_id}", "research", _RESEARCH_BODY, run_id=run_id)
