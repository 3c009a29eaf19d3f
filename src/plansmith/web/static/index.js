// plansmith web: the domains of the domains folder, each problem with its plan and a run.
"use strict";
(async () => {
  const box = document.getElementById("domains");
  let domains;
  try {
    domains = await PS.api("/api/domains");
  } catch (error) {
    box.textContent = error.message;
    return;
  }
  if (!domains.length) {
    box.textContent = "No domains: start `plansmith serve --domains DIR` with a folder per domain.";
    return;
  }
  box.replaceChildren(...domains.map((d) => {
    const card = PS.el("div", { class: "domain" },
      PS.el("h2", {}, d.name), PS.el("div", { class: "mono" }, d.domain_file));
    if (!d.runnable)
      card.append(PS.el("p", { class: "not-ready" }, `cannot run here: ${d.readiness.reason}`),
                  PS.el("p", { class: "fix" }, `fix: ${d.readiness.fix}`));
    for (const note of d.readiness.notes)
      card.append(PS.el("p", { class: "note" }, note));
    for (const p of d.problems) {
      const q = new URLSearchParams({ domain: d.name, problem: p });
      const run = PS.el("button", { class: "primary", disabled: !d.runnable,
                                   "aria-label": `create run for ${d.name} / ${p}` },
                          "create run");
      run.addEventListener("click", async () => {
        run.disabled = true;
        run.textContent = "binding…";
        try {
          const r = await PS.api("/api/runs", { method: "POST", body: { domain: d.name, problem: p } });
          location.href = `/runs/${r.run_id}/plan`;
        } catch (error) {
          card.append(PS.el("p", { class: "message" }, error.message));
          run.disabled = false;
          run.textContent = "create run";
        }
      });
      card.append(PS.el("div", { class: "problem" }, PS.el("code", {}, p),
        PS.el("a", { href: `/plan?${q}` }, "view plan"), run));
    }
    return card;
  }));
})();
