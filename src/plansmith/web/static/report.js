// plansmith web: the report of a run (outcome, timings per tool, failures, replans, steps).
"use strict";
(async () => {
  const runId = document.body.dataset.runId;
  const box = document.getElementById("report");
  let r;
  try {
    r = await PS.api(`/api/runs/${runId}/report`);
  } catch (error) {
    box.textContent = error.message;
    return;
  }
  document.getElementById("title").textContent = `report of ${runId}`;
  const table = (head, rows) => PS.el("table", {},
    PS.el("tr", {}, ...head.map((h) => PS.el("th", {}, h))),
    ...rows.map((cells) => PS.el("tr", {}, ...cells.map((c) =>
      PS.el("td", { class: typeof c === "number" ? "num" : "" }, c === null ? "" : String(c))))));
  const c = r.counts;
  const parts = [];
  if (r.asked && r.asked.request)
    parts.push(PS.el("p", { id: "asked" }, `asked: ${r.asked.request}`));
  if (r.after)  // a follow-up run: planned from the final state of the run it follows up
    parts.push(PS.el("p", { id: "after" }, "follows up run ",
                     PS.el("a", { href: `/runs/${encodeURIComponent(r.after)}` }, r.after)));
  if (r.inherited && r.inherited.length)
    parts.push(PS.el("h2", {}, "inherited (not called again)"),
               table(["producer", "read by"], r.inherited.map((i) => [i.producer, i.read_by.join(", ")])));
  parts.push(
    PS.el("h2", {}, "outcome"),
    table(["status", "reason", "plan", "approved by", "started", "ended", "wall", "busy", "steps"],
          [[r.status, r.reason, r.plan_hash, r.approved_by, r.started, r.ended,
            PS.ms(r.wall_ms), PS.ms(r.busy_ms), `${c.succeeded + (c.skipped || 0)} done / ${c.total}`]]),
    PS.el("h2", {}, "by tool"),
    table(["server", "tool", "calls", "total", "max"],
          r.by_tool.map((t) => [t.server, t.tool, t.calls, PS.ms(t.total_ms), PS.ms(t.max_ms)])));
  if (r.failures.length)
    parts.push(PS.el("h2", {}, "failures"),
               table(["step", "action", "error"], r.failures.map((f) => [f.step, f.action, f.error])));
  if (r.skipped && r.skipped.length)
    parts.push(PS.el("h2", {}, "skipped"),
               table(["step", "action", "value absent"], r.skipped.map((k) => [k.step, k.action, k.reason])));
  if (r.retried.length)
    parts.push(PS.el("h2", {}, "retries"),
               table(["step", "retries", "last error"], r.retried.map((f) => [f.step, f.retries, f.error])));
  if (r.replans.length)
    parts.push(PS.el("h2", {}, "replans"),
               table(["time", "failed", "reason", "new steps"],
                     r.replans.map((p) => [p.time, p.failed.join(", "), p.reason, p.new_steps.length])));
  parts.push(PS.el("h2", {}, "steps"),
             table(["step", "call", "server / tool", "state", "attempts", "at", "duration"],
                   r.steps.map((s) => [s.id, PS.call(s), `${s.server} / ${s.tool}`, s.state,
                                       s.attempts, PS.ms(s.offset_ms), PS.ms(s.duration_ms)])));
  box.replaceChildren(...parts);
})();
