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
    if (d.goals.length) card.append(PS.el("h3", {}, "named goals"));
    for (const g of d.goals) card.append(goalForm(d, g));
    return card;
  }));

  // A named goal as a form: an object for each parameter, a plan preview, a run.
  function goalForm(d, g) {
    const selects = g.parameters.map((p) => PS.el("select",
      { name: p.name, "aria-label": `${g.name} ${p.name}` },
      ...p.choices.map((c) => PS.el("option", { value: c }, c))));
    const empty = g.parameters.filter((p) => !p.choices.length).map((p) => p.name);
    const asked = () => ({ domain: d.name, goal: g.name,
      args: Object.fromEntries(selects.map((s) => [s.name, s.value])) });
    const out = PS.el("div", { class: "goal-plan" });
    const preview = PS.el("button", { disabled: empty.length > 0,
      "aria-label": `plan ${d.name} / ${g.name}` }, "plan");
    const run = PS.el("button", { class: "primary", disabled: !d.runnable || empty.length > 0,
      "aria-label": `create run for ${d.name} / ${g.name}` }, "create run");
    preview.addEventListener("click", async () => {
      preview.disabled = true;
      try {
        const p = await PS.api("/api/plan", { method: "POST", body: asked() });
        const actions = p.plan.steps.map((s) => `${s.action}(${s.args.join(", ")})`);
        out.replaceChildren(PS.el("p", {}, `${p.steps} steps, ${p.plan_hash.slice(0, 19)}…`),
          PS.el("ol", {}, ...actions.slice(0, 20).map((a) => PS.el("li", { class: "mono" }, a))));
        if (actions.length > 20) out.append(PS.el("p", {}, `and ${actions.length - 20} more`));
      } catch (error) {
        out.replaceChildren(PS.el("p", { class: "message" }, error.message));
      }
      preview.disabled = false;
    });
    run.addEventListener("click", async () => {
      run.disabled = true;
      run.textContent = "binding…";
      try {
        const r = await PS.api("/api/runs", { method: "POST", body: asked() });
        location.href = `/runs/${r.run_id}/plan`;
      } catch (error) {
        out.replaceChildren(PS.el("p", { class: "message" }, error.message));
        run.disabled = false;
        run.textContent = "create run";
      }
    });
    const fields = g.parameters.map((p, i) => PS.el("label", {}, `${p.name}: `, selects[i]));
    const form = PS.el("div", { class: "goal", "data-goal": g.name },
      PS.el("code", {}, g.name), PS.el("span", {}, g.description), ...fields, preview, run, out);
    if (empty.length)
      form.append(PS.el("p", { class: "note" },
        `no object of the domain's problem fits ${empty.join(", ")}: give one in a problem file`));
    return form;
  }
})();
