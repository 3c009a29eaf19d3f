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

Every call of a source also goes through the source's limits over time
(:mod:`._limits`, shared by the runs of a service): a call over the source's rate
waits for a slot (within the run's deadline; the run counts the calls delayed and
the seconds waited), and while the source's circuit breaker is open its searches
are skipped with the reason (the run counts the breaker's openings, recoveries and
refusals). The trace's ``usage`` and the report's budget section show them.

Every piece of evidence carries its document's type (official docs, changelog,
notes, blog: :mod:`plansmith.domains.research._source_types`). When the verifier
flags a value conflict, ``verify`` searches every source once more for the disputed
entity and attribute (a *follow-up*, at most ``max_followups``, within the same
search budget and quotas), reads the top passages not read yet, keeps those that
state the attribute, labels again, and records what it found for the report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import (
    EXPLAIN_SYSTEM_PROMPT,
    MAX_RESEARCH_LLM_CALLS,
    CallRecord,
    FollowUpRecord,
    ModelCall,
    ModelText,
    ResearchProblem,
    ResearchTrace,
    Subquestion,
    SubquestionRecord,
    Usage,
    document_type,
    evidence_from_fetch,
    explanation_prompt,
    value_conflicts,
    write_report,
)
from plansmith.domains.research.desk._cache import QueryCache, QueryKey
from plansmith.domains.research.desk._limits import (
    CircuitBreaker,
    RateQuota,
    SourceGuard,
    guards_for,
)
from plansmith.domains.research.desk._quota import CallVolume, SourceQuota
from plansmith.domains.research.verify import ClaimGroup, Evidence, claims_of, where
from plansmith.errors import PlansmithError, ToolCallError
from plansmith.execution import ToolResult
from plansmith.model import JSONValue

__all__ = ["CallSource", "ResearchDesk"]

#: the longest model explanation kept (characters)
MAX_EXPLANATION = 4000

#: calls a source's tool: (server, tool, arguments, idempotency key) -> result
CallSource = Callable[[str, str, dict[str, Any], str], Awaitable[ToolResult]]
_PAGE = 20000
#: an attribute's words, for the follow-up search of a conflict about it
_FOLLOW_UP_WORDS = {
    "released": "released release",
    "added in": "added new version",
    "changed in": "changed version",
    "deprecated in": "deprecated version",
    "removed in": "removed version",
    "end of life": "end life support until",
    "latest version": "latest version",
    "requires": "requires version",
}


class _RefusedError(Exception):
    """A source's circuit breaker refused a call; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _ident(group: ClaimGroup) -> tuple[str, str]:
    return group.entity, group.attribute


def _states(evidence: Evidence, group: ClaimGroup) -> bool:
    """Whether ``evidence`` states ``group``'s attribute of its entity."""
    return any((c.entity, c.attribute) == _ident(group) for c in claims_of(evidence))


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
    source_types: Mapping[str, str] = field(default_factory=dict)
    max_followups: int = 3
    followups: list[FollowUpRecord] = field(default_factory=list)
    guards: Mapping[str, SourceGuard] | None = None
    #: the run's own limits (a face's per-run rate or breaker), after the service's
    run_guards: Mapping[str, SourceGuard] | None = None
    #: the limits set, in words, per source (shown in the trace and the report)
    limits: tuple[str, ...] = ()
    delayed: int = 0
    waited: float = 0.0
    openings: int = 0
    recoveries: int = 0
    refused: int = 0
    breaker_events: list[str] = field(default_factory=list)
    #: a model to explain the flagged conflicts (one call, after verify; None: offline)
    model: ModelCall | None = None
    model_via: str = ""  # what the model is reached through: openai, sampling
    model_timeout: float = 60.0
    llm_calls: int = 0
    explained: ModelText | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.volume = CallVolume(dict(self.quota))
        if self.guards is None:  # a desk of its own: limits of its own
            self.guards = guards_for(self.quota)

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

    # -- a call of a source, through its limits over time --------------------------------

    def _guards(self, source: str) -> list[SourceGuard]:
        """The limits of ``source`` this run's calls go through: the service's, then the
        run's own."""
        found = [(self.guards or {}).get(source), (self.run_guards or {}).get(source)]
        return [g for g in found if g is not None]

    def _outcome(self, source: str, breaker: CircuitBreaker | None, ok: bool) -> None:
        if breaker is None:
            return
        at = f"{self.elapsed():.1f} s into the run"
        if ok and breaker.succeeded():
            self.recoveries += 1
            self.breaker_events.append(f"breaker of {source} closed again at {at}")
        elif not ok and breaker.failed():
            self.openings += 1
            self.breaker_events.append(
                f"breaker of {source} opened at {at} ({breaker.in_a_row} failed calls in a row)"
            )

    async def _call(
        self, source: str, tool: str, args: dict[str, Any], key: str, cut: list[str]
    ) -> ToolResult:
        """Call ``source``'s ``tool`` within its breakers (refused: :class:`_RefusedError`)
        and its rates (waiting for a slot; ``cut`` says so if the wait is cancelled): the
        service's, shared by the runs, then the run's own (``run_guards``), if any."""
        guards = self._guards(source)
        breakers = [g.breaker for g in guards if g.breaker is not None]
        taken: list[CircuitBreaker] = []
        for breaker in breakers:
            refused = breaker.refusal()
            if refused is not None:
                for other in taken:
                    other.abandoned()
                raise _RefusedError(refused)
            taken.append(breaker)
        held: list[RateQuota] = []
        waited = 0.0
        try:
            for rate in (g.rate for g in guards if g.rate is not None):
                try:
                    waited += await rate.acquire()
                except BaseException:
                    cut.append(
                        f"waiting for the rate quota of {source} "
                        f"({rate.calls} calls per {rate.window:g} s)"
                    )
                    raise
                held.append(rate)
        except BaseException:
            for breaker in breakers:
                breaker.abandoned()
            for rate in held:
                rate.release()
            raise
        if waited > 0:
            self.delayed += 1
            self.waited += waited
        try:
            result = await self.call_source(source, tool, args, key)
        except ToolCallError:
            for breaker in breakers:
                self._outcome(source, breaker, False)
            raise
        except BaseException:
            for breaker in breakers:
                breaker.abandoned()
            raise
        finally:
            for rate in held:
                rate.release()
        for breaker in breakers:
            self._outcome(source, breaker, not result.is_error)
        return result

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
        self,
        source: str,
        sq: Subquestion,
        key: str,
        why: list[str],
        skip: frozenset[str] = frozenset(),
    ) -> dict[str, Any] | None:
        remaining = self.problem.budget.max_seconds - self.elapsed()
        fetched = 0
        answer: dict[str, Any] | None = None
        cut: list[str] = []
        with anyio.move_on_after(max(0.0, remaining)):
            args = {"query": sq.query, "also": sq.also, "limit": self.limit}
            found = await self._call(source, "search", args, f"{key}/search", cut)
            if found.is_error or found.structured is None:
                why.append(f"search failed on {source}: {found.text[:200]}")
            else:
                raw: Any = found.structured.get("hits") or []
                hits: list[dict[str, Any]] = list(raw)
                pages: list[JSONValue] = []
                found_ids = dict.fromkeys(str(h["id"]) for h in hits)
                ids = [i for i in found_ids if i not in skip][: self.depth]
                for n, passage in enumerate(ids):
                    fetched += 1
                    args = {"id": passage, "max_chars": _PAGE}
                    try:
                        page = await self._call(source, "fetch", args, f"{key}/fetch/{n}", cut)
                    except _RefusedError:  # the breaker opened on another search's failures
                        fetched -= 1
                        continue
                    if not page.is_error and page.structured is not None:
                        pages.append(page.structured)
                answer = {"hits": len(hits), "pages": pages}
        self.volume.give_back(source, self.depth - fetched)
        if answer is None and not why:
            where = cut[0] if cut else "mid-search"
            why.append(f"time budget used up ({self.problem.budget.max_seconds:g} s) {where}")
        return answer

    async def _cached(
        self,
        source: str,
        sq: Subquestion,
        key: str,
        why: list[str],
        skip: frozenset[str] = frozenset(),
    ) -> tuple[dict[str, Any] | None, bool]:
        """The answer of ``source`` to ``sq`` from the query cache, else asked (within the
        budget and quota; ``why`` gets the reason when it is not); ``skip``: passages not
        to read (already read), so the pages read are new ones."""

        async def compute() -> dict[str, Any] | None:
            refused = None
            for guard in self._guards(source):
                if guard.breaker is not None and refused is None:
                    refused = guard.breaker.refusal(trial=False)
            if refused is not None:
                self.refused += 1
                why.append(refused)
                return None
            refused = self._admit(source)
            if refused is not None:
                why.append(refused)
                return None
            try:
                return await self._ask(source, sq, key, why, skip)
            except _RefusedError as error:  # opened (or half-open) since it was asked
                self.searches -= 1
                self.volume.give_back(source, 1 + self.depth)
                self.refused += 1
                why.append(error.reason)
                return None
            except ToolCallError as error:
                why.append(f"search failed on {source}: {error.message}")
                return None

        ckey: QueryKey = (source, sq.query, sq.also, self.limit, self.depth)
        if skip:
            ckey += (tuple(sorted(skip)),)
        answer, cached = await self.cache.get(ckey, compute)
        return answer, cached

    async def search(self, sq_id: str, src: str, key: str, step: str = "") -> dict[str, Any]:
        """Search source object ``src`` for subquestion ``sq_id`` (see the module)."""
        sq = self.spec(sq_id)
        source = self.sources.get(src)
        if source is None:
            raise ToolCallError("tool_error", f"no source object {src!r} in the research problem")
        why: list[str] = []
        t0 = self.clock()
        answer, cached = await self._cached(source, sq, key, why)
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
        items = self._evidence(source, answer["pages"], sq_id)
        self.evidence[(sq_id, source)] = items
        hits = int(answer["hits"])
        self.calls.append(
            CallRecord(sq_id, source, "search", sq.query, True, hits, cached, ms, "", step)
        )
        passages = [e.passage for e in items]
        return {"status": "searched", "hits": hits, "passages": passages, "cached": cached}

    def _evidence(self, source: str, pages: list[Any], sq_id: str) -> list[Evidence]:
        kind = self.source_types.get(source, "")
        items = [evidence_from_fetch(p, sq_id) for p in pages]
        return [replace(e, source_type=document_type(kind, e.path) if kind else "") for e in items]

    # -- follow-up searches on a conflict ------------------------------------------------

    async def _follow_up(self, n: int, group: ClaimGroup, key: str, step: str) -> None:
        """Search every source once more for ``group``'s entity and attribute; keep the
        new passages that state that attribute of that entity."""
        fu_id = f"fu{n}"
        attribute = group.attribute.split(":", 1)[0].replace("_", " ")
        also = _FOLLOW_UP_WORDS.get(attribute, attribute)
        if group.kind == "count":  # "count:workers": the things counted
            also = f"{group.attribute.rsplit(':', 1)[-1]} supports maximum"
        text = f"{group.entity}: {group.attribute}?"
        sq = Subquestion(fu_id, "follow-up", text, group.entity, also)
        seen = {e.passage for items in self.evidence.values() for e in items}
        searched: list[str] = []
        notes: list[str] = []
        found: list[Evidence] = []
        for source in self.sources.values():
            why: list[str] = []
            t0 = self.clock()
            fkey = f"{key}/{fu_id}/{source}"
            answer, cached = await self._cached(source, sq, fkey, why, frozenset(seen))
            ms = round((self.clock() - t0) * 1000, 3)
            if answer is None:
                reason = why[0] if why else "not searched"
                notes.append(f"{source} not searched ({reason})")
                self.calls.append(
                    CallRecord(fu_id, source, "search", sq.query, False, 0, False, ms, reason, step)
                )
                continue
            searched.append(source)
            hits = int(answer["hits"])
            self.calls.append(
                CallRecord(fu_id, source, "search", sq.query, True, hits, cached, ms, "", step)
            )
            kept = [
                e
                for e in self._evidence(source, answer["pages"], fu_id)
                if e.passage not in seen and _states(e, group)
            ]
            seen.update(e.passage for e in kept)
            if kept:
                self.evidence[(fu_id, source)] = kept
                found.extend(kept)
        claims = [
            c for e in found for c in claims_of(e) if (c.entity, c.attribute) == _ident(group)
        ]
        if claims:
            said = "; ".join(f"{where(c)} says {c.value_text}" for c in claims[:4])
            outcome = f"found {len(found)} more passage(s) stating it: {said}"
        else:
            outcome = "found no other passage stating it; the conflict stands on the sources above"
        if notes:
            outcome += " (" + "; ".join(notes) + ")"
        self.followups.append(
            FollowUpRecord(
                fu_id,
                group.entity,
                group.attribute,
                sq.query,
                also,
                tuple(searched),
                tuple(e.passage for e in found),
                outcome,
            )
        )

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
        asked = [s.id for s in p.subquestions] + [f.id for f in self.followups]
        evidence = tuple(e for s in asked for n in names for e in self.evidence.get((s, n), []))
        dropped = [d for d in p.decisions if not d.kept and d.reason.startswith("over budget")]
        reasons = list(self.reasons)
        if dropped:
            reasons.insert(0, f"{len(dropped)} subquestion(s) dropped as over budget")
        used = sum(
            1 for s in p.subquestions if any(c.ok for c in self.calls if c.subquestion == s.id)
        )
        usage = Usage(
            used,
            self.searches,
            round(self.elapsed(), 3),
            bool(reasons),
            tuple(reasons),
            delayed=self.delayed,
            waited=round(self.waited, 3),
            breaker_openings=self.openings,
            breaker_recoveries=self.recoveries,
            breaker_refusals=self.refused,
            breaker_events=tuple(self.breaker_events),
            limits=self.limits,
        )
        said = self.explained or ModelText("")
        return ResearchTrace(
            self.run_id,
            p,
            records,
            tuple(self.calls),
            evidence,
            usage,
            followups=tuple(self.followups),
            llm_calls=self.llm_calls,
            explanation=said.text,
            explanation_via=said.via,
            explanation_error=said.error,
        )

    async def verify(self, key: str = "", step: str = "") -> dict[str, Any]:
        """Label the claims; on a value conflict, search for a third source (see the
        module) and label again."""
        verdict = self.trace().verdict()
        if not self.followups:
            flagged = [
                g
                for g in verdict.with_label("disputed")
                if any(c.kind == "value" for c in g.conflicts)
            ]
            for n, group in enumerate(flagged[: self.max_followups], 1):
                await self._follow_up(n, group, key or self.run_id, step)
            if flagged:
                verdict = self.trace().verdict()
        await self.explain(verdict.groups)
        return {
            "consistent": len(verdict.with_label("consistent")),
            "disputed": len(verdict.with_label("disputed")),
            "single-source": len(verdict.with_label("single-source")),
            "followups": len(self.followups),
        }

    async def explain(self, groups: Sequence[ClaimGroup]) -> None:
        """With a model, ask it once why the sources may disagree on the flagged values
        (its text goes in the report, marked as model text); offline, or with nothing
        flagged, or once asked already, nothing is asked. A failed call is recorded, and
        the run goes on."""
        conflicts = value_conflicts(groups)
        if self.model is None or not conflicts or self.explained is not None:
            return
        if self.llm_calls >= MAX_RESEARCH_LLM_CALLS:
            return
        prompt = explanation_prompt(self.problem.question.text, conflicts)
        self.llm_calls += 1
        try:
            with anyio.fail_after(self.model_timeout):
                text = await self.model(EXPLAIN_SYSTEM_PROMPT, prompt)
        except TimeoutError:
            self.explained = ModelText(
                self.model_via, error=f"no answer within {self.model_timeout:g} s"
            )
            return
        except PlansmithError as error:
            self.explained = ModelText(self.model_via, error=f"{type(error).__name__}: {error}")
            return
        text = text.strip()[:MAX_EXPLANATION]
        self.explained = ModelText(self.model_via, text, "" if text else "an empty answer")

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
