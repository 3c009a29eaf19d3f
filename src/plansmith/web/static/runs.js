// plansmith web: the runs of the run log, newest first.
"use strict";
(async () => {
  const box = document.getElementById("runs");
  let runs;
  try {
    runs = await PS.api("/api/runs");
  } catch (error) {
    box.textContent = error.message;
    return;
  }
  if (!runs.length) { box.textContent = "No runs yet."; return; }
  const table = PS.el("table", {}, PS.el("tr", {}, ...["run", "created", "status", "problem",
    "steps done", "plan", "report"].map((h) => PS.el("th", {}, h))));
  for (const r of runs) {
    table.append(PS.el("tr", { "data-run": r.run_id },
      PS.el("td", {}, PS.el("a", { href: `/runs/${r.run_id}`, class: "mono" }, r.run_id)),
      PS.el("td", {}, r.created),
      PS.el("td", {}, PS.el("span", { class: "badge " + r.status.split(" ")[0] }, r.status)),
      PS.el("td", {}, `${r.inputs.domain || ""} / ${r.inputs.problem || ""}`),
      PS.el("td", { class: "num" }, `${r.counts.done} / ${r.counts.total}`),
      PS.el("td", {}, PS.el("a", { href: `/runs/${r.run_id}/plan` }, "plan")),
      PS.el("td", {}, PS.el("a", { href: `/runs/${r.run_id}/report` }, "report"))));
  }
  box.replaceChildren(table);
})();
