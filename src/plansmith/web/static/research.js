// plansmith web: a research run. Its state while it runs, then its trace (subquestions
// and the decisions on them, the searches, the verdict on each claim, the conflicts and
// their follow-ups) and its cited report.
"use strict";
(async () => {
  const runId = document.body.dataset.runId;
  const $ = (id) => document.getElementById(id);
  const ENDED = ["succeeded", "failed", "cancelled"];
  const table = (head, rows) => PS.el("table", {},
    PS.el("tr", {}, ...head.map((h) => PS.el("th", {}, h))),
    ...rows.map((cells) => PS.el("tr", {}, ...cells.map((c) =>
      PS.el("td", {}, c === null || c === undefined ? "" : String(c))))));
  const setState = (state) => {
    $("state").textContent = state;
    $("state").className = `badge ${state}`;
    document.body.dataset.status = state;
  };

  let status;
  try {
    for (;;) {  // poll until the run ends (research runs are short: seconds)
      status = await PS.api(`/api/research/${runId}`);
      setState(status.state);
      $("summary").textContent =
        `${status.done} / ${status.total} steps · ${status.searches} searches · ` +
        `${status.seconds.toFixed(1)} s`;
      if (ENDED.includes(status.state)) break;
      await new Promise((go) => setTimeout(go, 300));
    }
    const r = await PS.api(`/api/research/${runId}/report`);
    draw(r);
  } catch (error) {
    PS.message(error.message);
  }

  function draw(r) {
    const t = r.trace || {};
    const question = (t.problem || {}).question || {};
    $("question").textContent = question.text ? `question (${question.kind}): ${question.text}` : "";
    const parts = [];
    // the planner's decisions on the proposed subquestions (the trace's, else the problem's)
    const decisions = (t.decisions || []).length ? t.decisions : ((t.problem || {}).decisions || []);
    const decided = new Map(decisions.map((d) => [d.subquestion, d]));
    parts.push(PS.el("h2", {}, "subquestions and decisions"),
      table(["id", "subquestion", "facet", "status", "decision"],
        (t.subquestions || []).map((s) => {
          const d = decided.get(s.text) || decided.get(s.id);
          return [s.id, s.text, s.facet, s.status, d ? `${d.kept ? "kept" : "dropped"}: ${d.reason}` : ""];
        })));
    const dropped = decisions.filter((d) => !d.kept);
    if (dropped.length)
      parts.push(PS.el("h3", {}, "dropped"),
        table(["subquestion", "why"], dropped.map((d) => [d.subquestion, d.reason])));
    parts.push(PS.el("h2", {}, "searches"),
      table(["subquestion", "source", "query", "hits", "outcome"],
        (t.calls || []).map((c) => [c.subquestion, c.source, c.query, c.hits,
          c.ok ? (c.cached ? "ok (cached)" : "ok") : `failed: ${c.error}`])));
    parts.push(PS.el("h2", {}, "verdicts"),
      table(["entity", "attribute", "verdict", "values (sources)"],
        (t.claims || []).map((g) => [g.entity, g.attribute, g.label,
          Object.entries(g.values || {}).map(([v, s]) => `${v} (${s.join(", ")})`).join("; ")])));
    if ((t.conflicts || []).length)
      parts.push(PS.el("h2", {}, "conflicts"),
        table(["entity", "attribute", "conflict"],
          t.conflicts.flatMap((g) => g.conflicts.map((c) => [g.entity, g.attribute, c.detail]))));
    if ((t.followups || []).length)
      parts.push(PS.el("h2", {}, "follow-ups"),
        table(["id", "entity", "attribute", "query", "outcome"],
          t.followups.map((f) => [f.id, f.entity, f.attribute, f.query, f.outcome])));
    $("trace").replaceChildren(...parts);
    $("report").textContent = r.markdown;
    document.body.dataset.traced = String((t.calls || []).length);
  }
})();
