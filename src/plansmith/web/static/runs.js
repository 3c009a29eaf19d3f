// plansmith web: the runs of the run log, newest first, a page at a time.
"use strict";
(async () => {
  const PAGE = 50;
  const box = document.getElementById("runs");
  const before = new URLSearchParams(location.search).get("before");
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (before) query.set("before", before);
  let runs;
  try {
    runs = await PS.api("/api/runs?" + query);
  } catch (error) {
    box.textContent = error.message;
    return;
  }
  const pages = PS.el("p", { class: "pages" });
  if (before) pages.append(PS.el("a", { href: "/runs", id: "newest-runs" }, "newest runs"), " ");
  if (runs.length === PAGE) {
    const last = runs[runs.length - 1].run_id;
    pages.append(PS.el("a", { href: `/runs?before=${encodeURIComponent(last)}`,
                              id: "older-runs" }, "older runs →"));
  }
  if (!runs.length) {
    box.replaceChildren(before ? "No older runs." : "No runs yet.", pages);
    return;
  }
  const table = PS.el("table", {}, PS.el("tr", {}, ...["run", "created", "status", "problem",
    "steps done", "plan", "report"].map((h) => PS.el("th", {}, h))));
  for (const r of runs) {
    table.append(PS.el("tr", { "data-run": r.run_id },
      PS.el("td", {}, PS.el("a", { href: `/runs/${r.run_id}`, class: "mono" }, r.run_id)),
      PS.el("td", {}, r.created),
      PS.el("td", {}, PS.el("span", { class: "badge " + r.status.split(" ")[0] }, r.status)),
      PS.el("td", {}, `${r.inputs.domain || ""} / ${r.inputs.problem || ""}`),
      PS.el("td", { class: "num" }, `${r.counts.succeeded + (r.counts.skipped || 0)} / ${r.counts.total}`),
      PS.el("td", {}, PS.el("a", { href: `/runs/${r.run_id}/plan` }, "plan")),
      PS.el("td", {}, PS.el("a", { href: `/runs/${r.run_id}/report` }, "report"))));
  }
  box.replaceChildren(table, pages);
})();
