// plansmith web: the plan page. With data-run-id: the run's bound plan and Approve;
// with data-domain/data-problem: the plan alone and "Bind and create run".
"use strict";
(async () => {
  const body = document.body.dataset;
  const $ = (id) => document.getElementById(id);
  const t0 = performance.now();
  let steps, plan, hash, status = null, runnable = false, readiness = null;
  // the costs to plan with (?costs=learned: the ones the run log taught)
  const costs = body.costs === "learned" ? { costs: "learned" } : {};
  try {
    if (body.runId) {
      const run = await PS.api(`/api/runs/${body.runId}`);
      steps = run.steps; plan = run.plan; hash = run.plan_hash; status = run.status;
      $("title").textContent = `plan of ${run.run_id}`;
      document.title = `plan of ${run.run_id} · plansmith`;
      const recorded = (run.inputs.asked || {}).costs;  // planned with learned costs
      if (recorded) {
        const n = (v) => String(Number(v.toFixed(2)));
        $("costs").hidden = false;
        $("costs").replaceChildren(PS.el("p", {}, "planned with the costs learned from the run log: " +
          Object.entries(recorded).map(([a, c]) => `${a} ${n(c)}`).join(", ")));
      }
    } else {
      const out = await PS.api("/api/plan", { method: "POST",
                                body: { domain: body.domain, problem: body.problem, ...costs } });
      plan = out.plan; hash = out.plan_hash; runnable = out.runnable; readiness = out.readiness;
      steps = plan.steps.map((s) => Object.assign({}, s, { state: "pending" }));
      $("title").textContent = `plan: ${body.domain} / ${body.problem}` +
        (out.costs === "learned" ? " (learned costs)" : "");
      const learned = PS.learnedCosts(out);
      if (learned) {
        $("costs").hidden = false;
        $("costs").replaceChildren(learned);
      }
    }
  } catch (error) {
    PS.message(error.message);
    return;
  }
  const fetched = performance.now();
  $("hash").textContent = hash || "";
  const drawn = DAG.draw($("graph"), steps, (s) => DAG.detail($("detail"), s));
  DAG.tree($("tree"), plan.decomposition);
  const tiers = {};
  for (const s of steps) tiers[s.tier] = (tiers[s.tier] || 0) + 1;
  $("summary").textContent = `${steps.length} steps · ${drawn.layout.layers} layers · ` +
    Object.entries(tiers).map(([t, n]) => `${n} ${t}`).join(", ") +
    (status ? ` · ${status}` : "");
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const done = performance.now();
    document.body.dataset.fetchMs = (fetched - t0).toFixed(1);
    document.body.dataset.drawMs = (done - fetched).toFixed(1);
    document.body.dataset.renderedAt = done.toFixed(1);
    document.body.dataset.rendered = String(steps.length);
  }));

  if (body.runId) {
    const approve = $("approve");
    const open = status === "awaiting approval" || status === "interrupted" || status === "created";
    approve.disabled = !open || !hash;
    approve.title = hash ? `approve plan ${hash}` : "";
    if (!open) PS.message(`run is ${status}; see its run page`, true);
    approve.addEventListener("click", async () => {
      approve.disabled = true;
      try {
        await PS.api(`/api/runs/${body.runId}/approve`, { method: "POST", body: { plan_hash: hash } });
        location.href = `/runs/${body.runId}`;
      } catch (error) {
        PS.message(error.message);
        approve.disabled = false;
      }
    });
  } else {
    $("approve").hidden = true;
    if (!runnable) {
      PS.message(`cannot run here: ${readiness.reason}. Fix: ${readiness.fix}`, true);
      return;
    }
    const create = $("create");
    create.hidden = false;
    create.addEventListener("click", async () => {
      create.disabled = true;
      PS.message("starting the servers and binding the plan…", true);
      try {
        const run = await PS.api("/api/runs", { method: "POST",
                                 body: { domain: body.domain, problem: body.problem, ...costs } });
        location.href = `/runs/${run.run_id}/plan`;
      } catch (error) {
        PS.message(error.message);
        create.disabled = false;
      }
    });
  }
})();
