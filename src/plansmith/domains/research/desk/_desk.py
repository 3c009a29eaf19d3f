"""The research desk: what the research domain's actions do in one run.

The runner calls the desk through :class:`~._research_invoker.DeskInvoker`:
``search(s, src)`` asks source ``src`` the subquestion's query and reads its top
``depth`` passages; ``weigh(s, q)`` settles the subquestion's status;
``verify(q)`` labels the claims (the code verifier); ``compare``/``recommend``
note the sections the report writer adds; ``write_report(q)`` writes the
report and the trace into the run's folder.

Budgets are enforced here, at run time: a search is sent only while searches
(``max_searches``, counting searches sent to a source; cache hits cost none)
and seconds (``max_seconds`` from the run's start; a search in flight at the
deadline is cut) remain, and while the source's per-run call quota allows.
Otherwise the search is skipped, no new search is made, and the report says
"coverage limited" with the reasons.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import (
    CallRecord,
    ResearchProblem,
    ResearchTrace,
    Subquestion,
    SubquestionRecord,
    Usage,
    evidence_from_fetch,
    write_report,
)
from plansmith.domains.research.desk._cache import QueryCache
from plansmith.domains.research.desk._quota import CallVolume, SourceQuota
from plansmith.domains.research.verify import Evidence
from plansmith.errors import ToolCallError
from plansmith.execution import ToolResult
from plansmith.model import JSONValue

__all__ = ["CallSource", "ResearchDesk"]

#: calls a source's tool: (server, tool, arguments, idempotency key) -> result
CallSource = Callable[[str, str, dict[str, Any], str], Awaitable[ToolResult]]
_PAGE = 20000


@dataclass(slots=True)
class ResearchDesk:
    """One research run's state (see the module)."""

    run_id: str
    problem: ResearchProblem
    call_source: CallSource
    cache: QueryCache
    quota: Mapping[str, SourceQuota]
    depth: int = 3
    limit: int = 5
    run_dir: Path | None = None
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    stopped: float | None = None
    searches: int = 0
    calls: list[CallRecord] = field(default_factory=list)
    evidence: dict[tuple[str, str], list[Evidence]] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    volume: CallVolume = field(init=False)
    report_path: Path | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.volume = CallVolume(dict(self.quota))

    # -- what the plan's objects stand for ------------------------------------------------

    @property
    def sources(self) -> dict[str, str]:
        """Problem object -> source name (also the name of the source's server)."""
        return dict(self.problem.sources)

    def spec(self, sq_id: str) -> Subquestion:
        for s in self.problem.subquestions:
            if s.id == sq_id:
                return s
        raise ToolCallError("tool_error", f"no subquestion {sq_id!r} in the research problem")

    def start_clock(self) -> None:
        """Start counting the run's seconds (when it begins to run, not when it is asked)."""
        self.started, self.stopped = self.clock(), None

    def stop_clock(self) -> None:
        self.stopped = self.clock()

    def elapsed(self) -> float:
        return (self.stopped if self.stopped is not None else self.clock()) - self.started

    def _limit(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    # -- search ---------------------------------------------------------------------------

    def _admit(self, source: str) -> str | None:
        """Why a new search of ``source`` may not be sent now (None: it may; reserved)."""
        budget = self.problem.budget
        if self.searches >= budget.max_searches:
            return f"search budget used up ({budget.max_searches} searches)"
        if self.elapsed() >= budget.max_seconds:
            return f"time budget used up ({budget.max_seconds:g} s)"
        if not self.volume.take(source, 1 + self.depth):
            limit = self.quota[source].max_calls
            return f"quota of {source} used up ({limit} calls per run)"
        self.searches += 1
        return None

    async def _ask(
        self, source: str, sq: Subquestion, key: str, why: list[str]
    ) -> dict[str, Any] | None:
        remaining = self.problem.budget.max_seconds - self.elapsed()
        fetched = 0
        answer: dict[str, Any] | None = None
        with anyio.move_on_after(max(0.0, remaining)):
            args = {"query": sq.query, "also": sq.also, "limit": self.limit}
            found = await self.call_source(source, "search", args, f"{key}/search")
            if found.is_error or found.structured is None:
                why.append(f"search failed on {source}: {found.text[:200]}")
            else:
                raw: Any = found.structured.get("hits") or []
                hits: list[dict[str, Any]] = list(raw)
                pages: list[JSONValue] = []
                ids = list(dict.fromkeys(str(h["id"]) for h in hits))[: self.depth]
                for n, passage in enumerate(ids):
                    fetched += 1
                    args = {"id": passage, "max_chars": _PAGE}
                    page = await self.call_source(source, "fetch", args, f"{key}/fetch/{n}")
                    if not page.is_error and page.structured is not None:
                        pages.append(page.structured)
                answer = {"hits": len(hits), "pages": pages}
        self.volume.give_back(source, self.depth - fetched)
        if answer is None and not why:
            why.append(f"time budget used up ({self.problem.budget.max_seconds:g} s) mid-search")
        return answer

    async def search(self, sq_id: str, src: str, key: str, step: str = "") -> dict[str, Any]:
        """Search source object ``src`` for subquestion ``sq_id`` (see the module)."""
        sq = self.spec(sq_id)
        source = self.sources.get(src)
        if source is None:
            raise ToolCallError("tool_error", f"no source object {src!r} in the research problem")
        why: list[str] = []

        async def compute() -> dict[str, Any] | None:
            refused = self._admit(source)
            if refused is not None:
                why.append(refused)
                return None
            try:
                return await self._ask(source, sq, key, why)
            except ToolCallError as error:
                why.append(f"search failed on {source}: {error.message}")
                return None

        t0 = self.clock()
        ckey = (source, sq.query, sq.also, self.limit, self.depth)
        answer, cached = await self.cache.get(ckey, compute)
        ms = round((self.clock() - t0) * 1000, 3)
        if answer is None:
            reason = why[0] if why else "not searched"
            self.skipped.setdefault(sq_id, []).append(reason)
            if "failed" not in reason:
                self._limit(reason)
            self.calls.append(
                CallRecord(sq_id, source, "search", sq.query, False, 0, False, ms, reason, step)
            )
            return {"status": "skipped", "reason": reason, "hits": 0, "passages": []}
        items = [evidence_from_fetch(p, sq_id) for p in answer["pages"]]
        self.evidence[(sq_id, source)] = items
        hits = int(answer["hits"])
        self.calls.append(
            CallRecord(sq_id, source, "search", sq.query, True, hits, cached, ms, "", step)
        )
        passages = [e.passage for e in items]
        return {"status": "searched", "hits": hits, "passages": passages, "cached": cached}

    # -- the other actions ----------------------------------------------------------------

    def weigh(self, sq_id: str) -> dict[str, Any]:
        sq = self.spec(sq_id)
        found = sum(len(v) for (s, _), v in self.evidence.items() if s == sq.id)
        searched = any(c.ok for c in self.calls if c.subquestion == sq.id)
        if found:
            status = "answered"
        elif not searched and self.skipped.get(sq.id):
            status = "not searched: " + self.skipped[sq.id][0]
        else:
            status = "no evidence"
        self.status[sq.id] = status
        return {"subquestion": sq.id, "status": status, "evidence": found}

    def trace(self) -> ResearchTrace:
        """The run's trace so far (subquestions in the problem's order, evidence in
        subquestion then source order)."""
        p = self.problem
        names = [name for _, name in p.sources]
        records = tuple(
            SubquestionRecord(
                s.id,
                s.text,
                s.facet,
                s.query,
                self.status.get(s.id, "not weighed"),
                s.option,
                s.criterion,
            )
            for s in p.subquestions
        )
        evidence = tuple(
            e for s in p.subquestions for n in names for e in self.evidence.get((s.id, n), [])
        )
        dropped = [d for d in p.decisions if not d.kept and d.reason.startswith("over budget")]
        reasons = list(self.reasons)
        if dropped:
            reasons.insert(0, f"{len(dropped)} subquestion(s) dropped as over budget")
        used = sum(
            1 for s in p.subquestions if any(c.ok for c in self.calls if c.subquestion == s.id)
        )
        usage = Usage(used, self.searches, round(self.elapsed(), 3), bool(reasons), tuple(reasons))
        return ResearchTrace(self.run_id, p, records, tuple(self.calls), evidence, usage)

    def verify(self) -> dict[str, Any]:
        verdict = self.trace().verdict()
        return {
            "consistent": len(verdict.with_label("consistent")),
            "disputed": len(verdict.with_label("disputed")),
            "single-source": len(verdict.with_label("single-source")),
        }

    def write_report(self, out: Path | None = None) -> dict[str, Any]:
        trace = self.trace()
        report = write_report(trace)
        target = out or (self.run_dir or Path(".")) / "report.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(report.markdown, encoding="utf-8")
        document = {"trace": trace.to_json(), "report": report.to_json()}
        trace_file = target.with_name("research.json")
        trace_file.write_text(json.dumps(document, indent=1, sort_keys=True), encoding="utf-8")
        self.report_path = target
        return {
            "report": str(target),
            "trace": str(trace_file),
            "coverage_limited": report.coverage_limited,
            "citations": len(report.citations),
        }
