// plansmith web: the run metrics of the log (GET /api/metrics) as SVG bar charts drawn
// here (no chart library): runs per domain by outcome, each tool's calls (succeeded and
// failed), runs per time window, and the failures by error class.
"use strict";
(async () => {
  const NS = "http://www.w3.org/2000/svg";
  const OUTCOMES = ["succeeded", "failed", "cancelled", "unfinished"];
  // the run page's colours: a bar's class (app.css) by what it counts
  const CLASS = { succeeded: "st-succeeded", failed: "st-failed", cancelled: "st-cancelled",
                  unfinished: "st-running" };
  const LABEL_W = 220, BAR_W = 520, ROW_H = 26, BAR_H = 18, PAD = 8;

  function svg(tag, attrs = {}, ...children) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    }
    for (const c of children) node.append(c instanceof Node ? c : String(c));
    return node;
  }

  const many = (n, one, more = one + "s") => `${n} ${n === 1 ? one : more}`;
  const pct = (v) => (v === null || v === undefined ? "–" : `${Math.round(v * 100)}%`);
  const num = (v, unit = "") => (v === null || v === undefined ? "–"
                                 : `${Number.isInteger(v) ? v : v.toFixed(1)}${unit}`);

  // Horizontal stacked bars, one row each: {label, note, data: {...}, parts: [{kind, count}]}.
  // Each part is a <rect class="bar st-..." data-kind data-count>; each row a <g data-row>.
  function stackedBars(rows, name) {
    const most = Math.max(1, ...rows.map((r) => r.parts.reduce((a, p) => a + p.count, 0)));
    const height = rows.length * ROW_H + 2 * PAD;
    const chart = svg("svg", { width: LABEL_W + BAR_W + 160, height, role: "img",
                               "aria-label": name, "data-chart": name });
    rows.forEach((row, i) => {
      const y = PAD + i * ROW_H;
      const g = svg("g", Object.assign({ "data-row": row.label }, row.data));
      g.append(svg("text", { x: LABEL_W - 8, y: y + BAR_H - 4, "text-anchor": "end",
                             "font-size": 12 }, row.label));
      let x = LABEL_W;
      let total = 0;
      for (const part of row.parts) {
        total += part.count;
        if (!part.count) continue;
        const w = Math.max(2, (part.count / most) * BAR_W);
        const rect = svg("rect", { x, y, width: w, height: BAR_H, rx: 3,
                                   class: `bar ${part.cls}`, "data-kind": part.kind,
                                   "data-count": part.count },
                         svg("title", {}, `${row.label}: ${part.count} ${part.kind}`));
        g.append(rect);
        x += w;
      }
      g.append(svg("text", { x: x + 6, y: y + BAR_H - 4, "font-size": 12,
                             class: "bar-note" }, row.note !== undefined ? row.note : total));
      chart.append(g);
    });
    return chart;
  }

  function legend(kinds) {
    return PS.el("div", { class: "legend" },
      ...kinds.map(([kind, cls]) => PS.el("span", { style: `--c: var(--${cls.slice(3)})` }, kind)));
  }

  function outcomeParts(f) {
    return OUTCOMES.map((o) => ({ kind: o, count: f.outcomes[o], cls: CLASS[o] }));
  }

  function summary(total) {
    const t = total.time_to_approval_s;
    const i = total.interventions;
    const rows = [
      ["runs", total.runs],
      ["completion rate", `${pct(total.completion_rate)} (${total.outcomes.succeeded} of`
                          + ` ${total.finished} finished)`],
      ["steps per run", num(total.steps_per_run)],
      ["step retries", total.retries],
      ["replans", total.replans],
      ["interventions", `${i.total} (${many(i.approvals_by_person, "approval")} by a person,`
                        + ` ${many(i.cancels, "cancel")}, ${many(i.run_retries, "run retry",
                                                                   "run retries")})`],
      ["time to approval", t.count ? `p50 ${num(t.p50, " s")}, p95 ${num(t.p95, " s")}`
                                     + ` (${many(t.count, "approval")})` : "–"],
    ];
    return PS.el("table", { id: "totals" }, ...rows.map(([k, v]) =>
      PS.el("tr", { "data-figure": k }, PS.el("th", {}, k), PS.el("td", { class: "num" }, v))));
  }

  const params = new URLSearchParams(location.search);
  const window_ = params.get("window") || "1d";
  const select = document.getElementById("window");
  select.value = window_;
  select.addEventListener("change", () => {
    params.set("window", select.value);
    location.search = params.toString();
  });

  let data;
  try {
    data = await PS.api("/api/metrics?" + new URLSearchParams({ window: window_ }));
  } catch (error) {
    PS.message(error.message);
    document.body.dataset.rendered = "error";
    return;
  }
  const total = data.total;
  document.getElementById("summary").textContent = data.unreadable
    ? `${data.unreadable} run(s) could not be read and are left out` : "";
  if (!total.runs) {
    document.getElementById("totals-box").textContent = "No runs yet.";
    document.body.dataset.rendered = "0";
    return;
  }
  document.getElementById("totals-box").replaceChildren(summary(total));

  const outcomeLegend = OUTCOMES.map((o) => [o, CLASS[o]]);
  document.getElementById("domains-chart").replaceChildren(legend(outcomeLegend),
    stackedBars(data.by_domain.map((d) => ({
      label: d.domain, parts: outcomeParts(d), data: { "data-domain": d.domain, "data-runs": d.runs },
      note: `${many(d.runs, "run")}, ${pct(d.completion_rate)} completed`,
    })), "runs per domain"));

  const tools = total.tools.map((t) => ({
    label: `${t.server} / ${t.tool}`,
    parts: [{ kind: "succeeded", count: t.succeeded, cls: CLASS.succeeded },
            { kind: "failed", count: t.failures, cls: CLASS.failed }],
    data: { "data-tool": `${t.server}/${t.tool}`, "data-calls": t.calls },
    note: `${many(t.calls, "call")}, ${pct(t.success_rate)} succeeded`,
  }));
  document.getElementById("tools-chart").replaceChildren(
    tools.length ? legend([["succeeded", CLASS.succeeded], ["failed", CLASS.failed]]) : "",
    tools.length ? stackedBars(tools, "tool calls") : "No tool was called.");

  document.getElementById("windows-chart").replaceChildren(legend(outcomeLegend),
    stackedBars(data.by_window.map((w) => ({
      label: w.start.replace("T00:00:00Z", "").replace(":00Z", "").replace("T", " "),
      parts: outcomeParts(w), data: { "data-window": w.start, "data-runs": w.runs },
      note: many(w.runs, "run"),
    })), "runs per window"));

  const failures = [];
  for (const d of data.by_domain) {
    for (const t of d.tools) {
      for (const [cls, n] of Object.entries(t.failed)) failures.push([d.domain, t, cls, n]);
    }
  }
  document.getElementById("failures").replaceChildren(failures.length
    ? PS.el("table", {}, PS.el("tr", {}, ...["domain", "server", "tool", "error class", "failed",
                                             "of calls"].map((h) => PS.el("th", {}, h))),
        ...failures.map(([d, t, cls, n]) => PS.el("tr", { "data-failure": `${t.server}/${t.tool}/${cls}` },
          PS.el("td", {}, d), PS.el("td", {}, t.server), PS.el("td", {}, t.tool),
          PS.el("td", {}, cls), PS.el("td", { class: "num" }, n),
          PS.el("td", { class: "num" }, t.calls))))
    : "No tool call failed.");
  document.body.dataset.rendered = String(document.querySelectorAll("svg rect.bar").length);
})();
