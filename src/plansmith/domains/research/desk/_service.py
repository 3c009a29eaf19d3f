"""Research runs as a service: one corpus server per source, shared by every run.

``ResearchService(engine, {"python-docs": folder, ...})`` starts one
``plansmith-corpus`` server per source (on first use) and keeps them for all
runs, so that a source's quota holds across runs: ``max_in_flight`` calls at
once (the server pool's limiter for that server), ``max_rate`` calls per
``rate_window`` seconds and the circuit breaker (one per source, shared by the
runs: :mod:`._limits`), and ``max_calls`` per run.
Identical queries share one cache. ``start_research`` returns a run id at
once; the run goes on in the engine's run table (see :func:`~._run.run_research`),
listed and cancelled with every other run of the face. The servers are kept by
:class:`~._pool.SourceServers`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import (
    MAX_RESEARCH_LLM_CALLS,
    PROPOSE_SYSTEM_PROMPT,
    Budget,
    ModelCall,
    ModelText,
    check_question,
    check_source_folder,
    classify,
    explanation_prompt,
    folder_type,
    proposal_prompt,
    propose,
    read_proposals,
    value_conflicts,
)
from plansmith.domains.research.desk._cache import QueryCache
from plansmith.domains.research.desk._desk import ResearchDesk
from plansmith.domains.research.desk._limits import REAL_CLOCK, LimitClock, guards_for
from plansmith.domains.research.desk._pool import SourceServers
from plansmith.domains.research.desk._quota import LimitSettings, SourceQuota, describe_quota
from plansmith.domains.research.desk._run import (
    ResearchRequest,
    prepare_research,
    run_research,
)
from plansmith.domains.research.desk._status import read_report, research_status
from plansmith.domains.research.desk._types import ResearchHandle, ResearchReport, ResearchStatus
from plansmith.engine import Engine, RunFeed, RunHandle, RunTable
from plansmith.errors import BusyError, InputError, Location, PlansmithError, RunNotFoundError
from plansmith.execution import Event, RunOutcome, RunView, ToolResult

__all__ = ["ResearchService", "budget_from"]

_BUDGET_KEYS = ("max_subtasks", "max_searches", "max_seconds")


def _own_words(source: str, quota: SourceQuota) -> str:
    """A run's own limits of ``source`` in words (no calls at once nor per run: those
    are the service's)."""
    words = describe_quota(f"{source} (this run's own)", quota)
    return words.rsplit(";", 1)[0]


def budget_from(given: Mapping[str, float] | None, default: Budget) -> Budget:
    """A :class:`Budget` from a request's ``budget`` object (missing keys: ``default``'s)."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(_BUDGET_KEYS))
    if unknown:
        raise InputError(
            f"unknown budget key(s): {', '.join(unknown)}",
            location=Location(argument="budget"),
            hint=f"the budget's keys are {', '.join(_BUDGET_KEYS)}",
        )
    values = {k: given.get(k, getattr(default, k)) for k in _BUDGET_KEYS}
    if any(isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in values.values()):
        raise InputError(
            f"budget values must be numbers >= 0, not {values}",
            location=Location(argument="budget"),
        )
    return Budget(
        int(values["max_subtasks"]), int(values["max_searches"]), float(values["max_seconds"])
    )


@dataclass(slots=True)
class _Run:
    desk: ResearchDesk
    owner: str
    handle: RunHandle | None = None  # its drive in the engine's run table
    error: str | None = None
    subscribers: list[Callable[[Event], None]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.handle is None or self.handle.done.is_set()


class ResearchService:
    """See the module. ``sources``: source name -> folder of documents. Enter it
    (``async with``) in the face's event loop: its runs go on in the engine's run table
    (``table``, default one of its own), and leaving it cancels them, then stops the
    source servers."""

    def __init__(
        self,
        engine: Engine,
        sources: Mapping[str, str | Path],
        *,
        state_dir: str | Path | None = None,
        quota: SourceQuota | Mapping[str, SourceQuota] | None = None,
        excludes: Mapping[str, tuple[str, ...]] | None = None,
        max_runs: int = 20,
        max_parallel: int = 8,
        budget: Budget | None = None,
        depth: int = 3,
        share_runs: bool = False,
        python: str | None = None,
        table: RunTable | None = None,
        limit_clock: LimitClock = REAL_CLOCK,
        model: ModelCall | None = None,
        model_via: str = "",
    ) -> None:
        if not sources:
            raise InputError("research needs at least one source", hint="pass --source DIR")
        self.engine = engine
        self.sources = {name: check_source_folder(name, root) for name, root in sources.items()}
        self.source_types = {name: folder_type(root) for name, root in self.sources.items()}
        self.state_dir = Path(state_dir) if state_dir else engine.home / "research"
        if isinstance(quota, SourceQuota) or quota is None:
            quota = {name: quota or SourceQuota() for name in self.sources}
        self.quota = {name: quota.get(name, SourceQuota()) for name in self.sources}
        self.max_runs, self.max_parallel, self.share_runs = max_runs, max_parallel, share_runs
        self.budget, self.depth = budget or Budget(), depth
        self.cache = QueryCache()
        self.guards = guards_for(self.quota, limit_clock)  # per source, shared by the runs
        self.limit_clock = limit_clock
        # a model that explains each run's flagged conflicts (one call; None: offline)
        self.model, self.model_via = model, model_via
        self.servers = SourceServers(
            self.sources, self.state_dir, self.quota, excludes=excludes, python=python
        )
        self._runs: dict[str, _Run] = {}
        self.table = table or RunTable(
            engine, max_parallel=max_parallel, stop_reason="the research service stopped"
        )
        self._own_table = table is None

    def log_path(self, source: str) -> Path:
        """The JSONL call log of ``source``'s server."""
        return self.servers.log_path(source)

    async def _call_source(
        self, server: str, tool: str, arguments: dict[str, Any], key: str
    ) -> ToolResult:
        return await self.servers.call(server, tool, arguments, key)

    async def __aenter__(self) -> ResearchService:
        if self._own_table:
            await self.table.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        """Cancel the runs in flight (each records it), then stop the source servers."""
        try:
            if self._own_table:
                await self.table.__aexit__(*exc)
            else:
                for run_id, run in self._runs.items():
                    if not run.done:
                        await self.table.cancel(run_id, self.table.stop_reason)
        finally:
            await self.servers.aclose()

    # -- runs -----------------------------------------------------------------------------

    def active(self) -> int:
        return sum(1 for r in self._runs.values() if not r.done)

    def start_research(
        self,
        question: str,
        *,
        sources: Sequence[str] | None = None,
        max_depth: int | None = None,
        budget: Mapping[str, float] | None = None,
        extra: Sequence[str] = (),
        owner: str = "",
        subscribe: Callable[[Event], None] | None = None,
        limits: LimitSettings | None = None,
        model: ModelCall | None = None,
        model_via: str = "",
        offline: bool = False,
        proposed: Sequence[str] = (),
        llm_calls: int = 0,
    ) -> ResearchHandle:
        """Start a research run; its id comes back at once (see the module). ``extra``:
        more subquestions (a model's, say), kept or dropped by the rule filter;
        ``limits``: the run's own rate and breaker (:func:`~._quota.limit_settings`),
        which hold for its calls on top of the service's (they can only tighten them);
        ``model``: the model that explains the run's flagged conflicts (default: the
        service's), ``offline``: none; ``proposed``: a model's subquestions (facet
        ``model``, kept or dropped by the rules), ``llm_calls`` the model calls made for
        them (counted in the run's). A bad question (empty, over 10 KB) is refused
        before a run is made."""
        check_question(question)
        names = tuple(dict.fromkeys(sources or self.sources))
        unknown = [n for n in names if n not in self.sources]
        if unknown:
            raise InputError(
                f"unknown source(s): {', '.join(unknown)}",
                location=Location(argument="sources"),
                hint=f"sources are: {', '.join(self.sources)}",
            )
        depth = self.depth if max_depth is None else max_depth
        if not 1 <= depth <= 8:
            raise InputError(
                f"max_depth must be 1 to 8 (passages read per search), not {depth}",
                location=Location(argument="max_depth"),
            )
        if self.active() >= self.max_runs:
            raise BusyError(
                f"{self.max_runs} research runs are in flight, the most this server allows",
                hint="busy, retry later (poll get_research_status until one finishes)",
            )
        request = ResearchRequest(
            question,
            names,
            budget_from(budget, self.budget),
            depth,
            tuple(extra),
            tuple(proposed),
            llm_calls,
        )
        own = self._own_quota(names, limits) if limits else {}
        described = tuple(describe_quota(n, self.quota[n]) for n in names) + tuple(
            _own_words(n, q) for n, q in own.items()
        )
        run_id = self.engine.new_run_id()
        desk = prepare_research(
            self.engine,
            run_id,
            request,
            self._call_source,
            cache=self.cache,
            quota=self.quota,
            source_types=self.source_types,
            guards=self.guards,
            run_guards=guards_for(own, self.limit_clock) if own else None,
            limits=described,
            model=None if offline else (model or self.model),
            model_via=model_via if model else self.model_via,
        )
        run = _Run(desk, owner, subscribers=[subscribe] if subscribe else [])
        run.handle = self.table.start(run_id, lambda feed: self._execute(run, feed), owner=owner)
        self._runs[run_id] = run
        p = desk.problem
        return ResearchHandle(
            run_id,
            "starting",
            p.question.text,
            p.question.kind,
            names,
            tuple(
                f"{s.id}{f' (part {s.part})' if s.part else ''}: {s.text}" for s in p.subquestions
            ),
        )

    def _own_quota(self, names: Sequence[str], limits: LimitSettings) -> dict[str, SourceQuota]:
        """A run's own limits per source: a rate where one is set for it, a breaker when
        the breaker's failures or cool-down are set (a cool-down alone keeps the
        service's failure count)."""
        own: dict[str, SourceQuota] = {}
        for name in names:
            shared = self.quota[name]
            failures = 0
            if limits.breaker_failures is not None or limits.breaker_cooldown is not None:
                failures = shared.breaker_failures
            base = SourceQuota(shared.max_in_flight, shared.max_calls, 0, 1.0, failures)
            quota = limits.apply(base, name)
            if quota.max_rate or quota.breaker_failures:
                own[name] = quota
        return own

    async def _execute(self, run: _Run, feed: RunFeed) -> RunOutcome:
        def tell(event: Event) -> None:
            feed.push(event)
            for fn in run.subscribers:
                fn(event)

        try:
            await self.servers.pool()
            run.desk.start_clock()
            outcome = await run_research(
                self.engine, run.desk, max_parallel=self.max_parallel, subscribe=tell
            )
            if outcome.state != "succeeded":
                run.error = outcome.reason
            return outcome
        except PlansmithError as error:
            run.error = f"{type(error).__name__}: {error}"
            raise
        except anyio.get_cancelled_exc_class():
            run.error = "cancelled"
            raise
        except Exception as error:  # the run engine died: say so in the status
            run.error = f"InternalError: {type(error).__name__}: {error}"
            raise
        finally:
            run.desk.stop_clock()

    async def wait(self, run_id: str, *, owner: str = "") -> ResearchStatus:
        """Wait for a run of this service to end; its final status."""
        run = self._run(run_id, owner)
        if run.handle is not None:
            await run.handle.done.wait()
        return self.get_research_status(run_id, owner=owner)

    def _run(self, run_id: str, owner: str) -> _Run:
        run = self._runs.get(run_id)
        if run is None or (not self.share_runs and run.owner != owner):
            raise RunNotFoundError(
                f"no research run {run_id!r} in this session",
                location=Location(argument="run_id"),
                hint="start one with start_research; use the run_id it returns",
            )
        return run

    def get_research_status(self, run_id: str, *, owner: str = "") -> ResearchStatus:
        run = self._run(run_id, owner)
        return research_status(run.desk, self.engine.log, task_done=run.done, error=run.error)

    def proposal_request(self, question: str) -> str:
        """The prompt that asks a model for more subquestions of ``question`` (checked
        first: a bad question raises, and no model is asked)."""
        check_question(question)
        classified = classify(question)
        planned = [s.text for s in propose(classified)]
        return proposal_prompt(classified, planned)

    async def model_proposals(
        self, question: str, model: ModelCall, *, timeout: float = 60.0
    ) -> tuple[tuple[str, ...], str]:
        """Ask ``model`` once for more subquestions of ``question``: the proposals read
        from its answer, and why there are none when the call failed ("")."""
        prompt = self.proposal_request(question)
        try:
            with anyio.fail_after(timeout):
                text = await model(PROPOSE_SYSTEM_PROMPT, prompt)
        except TimeoutError:
            return (), f"no answer within {timeout:g} s"
        except PlansmithError as error:
            return (), f"{type(error).__name__}: {error}"
        return read_proposals(text), ""

    def add_explanation(self, run_id: str, said: ModelText, *, owner: str = "") -> ResearchReport:
        """Keep a model's explanation of a finished run's flagged conflicts, asked after
        the run (the host's model, through sampling): the report and trace are written
        again with it, and the call is counted in the run's ``llm_calls``."""
        run = self._run(run_id, owner)
        if not run.done:
            raise BusyError(
                f"research run {run_id} is still running",
                hint="wait until get_research_status says it is done",
            )
        desk = run.desk
        if desk.explained is not None or desk.llm_calls >= MAX_RESEARCH_LLM_CALLS:
            raise InputError(
                f"research run {run_id} has its model explanation already "
                f"({desk.llm_calls} model call(s))",
                location=Location(argument="run_id"),
                hint="a run asks a model at most once to explain its conflicts",
            )
        desk.llm_calls += 1
        desk.explained = said
        desk.write_report()
        return self.get_research_report(run_id, owner=owner)

    def explanation_request(self, run_id: str, *, owner: str = "") -> str | None:
        """The prompt that asks a model to explain a finished run's flagged conflicts;
        None when the run is not done, flagged no value conflict, or was explained."""
        run = self._runs.get(run_id)
        if run is None or not run.done or (not self.share_runs and run.owner != owner):
            return None
        desk = run.desk
        if desk.explained is not None or desk.llm_calls >= MAX_RESEARCH_LLM_CALLS:
            return None
        conflicts = value_conflicts(desk.trace().verdict().groups)
        if not conflicts:
            return None
        return explanation_prompt(desk.problem.question.text, conflicts)

    def get_research_report(
        self, run_id: str, *, owner: str = "", trace: bool = True
    ) -> ResearchReport:
        """The report of a run of this session, or one stored under the engine's home."""
        run = self._runs.get(run_id)
        if run is None and (self.share_runs or owner == "local"):  # an earlier process's
            try:
                view = RunView.fold(self.engine.log.events(run_id), run_id)
                state = view.finished or "interrupted"
            except RunNotFoundError:
                state = "succeeded"  # not in this log: only the run's folder can tell
            return read_report(self.engine.home / "runs" / run_id, run_id, state, trace)
        run = self._run(run_id, owner)
        status = self.get_research_status(run_id, owner=owner)
        return read_report(
            self.engine.home / "runs" / run_id, run_id, status.state, trace, error=run.error
        )
