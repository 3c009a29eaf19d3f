// plansmith web: the domains of the domains folder, each problem with its plan and a run.
"use strict";
(async () => {
  // the file names a chooser offers for an input's formats
  const FORMATS = { fasta: [".fasta", ".fa", ".fna", ".faa", ".fas"],
                    genbank: [".gb", ".gbk", ".genbank"] };
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
  // the sources research questions are answered over ([] when none is served)
  const research = await PS.api("/api/research").catch(() => ({ sources: [] }));
  box.replaceChildren(...domains.map((d) => {
    const card = PS.el("div", { class: "domain" },
      PS.el("h2", {}, d.name), PS.el("div", { class: "mono" }, d.domain_file));
    if (d.name === "research" && research.sources.length) {
      card.append(researchForm(research.sources));
      return card;
    }
    if (!d.runnable)
      card.append(PS.el("p", { class: "not-ready" }, `cannot run here: ${d.readiness.reason}`),
                  PS.el("p", { class: "fix" }, `fix: ${d.readiness.fix}`));
    for (const note of d.readiness.notes)
      card.append(PS.el("p", { class: "note" }, note));
    // the action costs its plans and runs are made with: the domain's, or the ones
    // learned from the run log (a domain made from files)
    const costs = d.kind === "file" ? PS.el("select", { name: "costs",
      "aria-label": `costs for ${d.name}` },
      PS.el("option", { value: "declared" }, "declared"),
      PS.el("option", { value: "learned" }, "learned")) : null;
    d.costs = () => (costs && costs.value === "learned" ? { costs: "learned" } : {});
    if (costs)
      card.append(PS.el("label", { class: "costs", title: "learned: expected duration over" +
        " success rate from the run log, the declared cost until there are runs" },
        "costs: ", costs));
    const links = [];
    for (const p of d.problems) {
      const q = () => new URLSearchParams(Object.assign({ domain: d.name, problem: p }, d.costs()));
      const run = PS.el("button", { class: "primary", disabled: !d.runnable,
                                   "aria-label": `create run for ${d.name} / ${p}` },
                          "create run");
      run.addEventListener("click", async () => {
        run.disabled = true;
        run.textContent = "binding…";
        try {
          const r = await PS.api("/api/runs", { method: "POST",
                                                body: { domain: d.name, problem: p, ...d.costs() } });
          location.href = `/runs/${r.run_id}/plan`;
        } catch (error) {
          card.append(PS.el("p", { class: "message" }, error.message));
          run.disabled = false;
          run.textContent = "create run";
        }
      });
      const link = PS.el("a", { href: `/plan?${q()}` }, "view plan");
      links.push(() => { link.href = `/plan?${q()}`; });
      card.append(PS.el("div", { class: "problem" }, PS.el("code", {}, p), link, run));
    }
    if (costs) costs.addEventListener("change", () => links.forEach((update) => update()));
    const inputs = d.inputs.length ? inputsForm(d) : null;
    if (inputs) card.append(PS.el("h3", {}, "inputs"), inputs.form);
    if (inputs && !d.goals.length) card.append(jobForm(d, inputs));
    if (d.goals.length) card.append(PS.el("h3", {}, "named goals"));
    for (const g of d.goals) card.append(goalForm(d, g, inputs));
    return card;
  }));

  // The domain's inputs: a file chooser per file (uploaded as it is chosen), a path per
  // folder, a number per value; ``values()`` is what a plan or run request passes.
  function inputsForm(d) {
    const given = {};
    const fields = d.inputs.map((i) => {
      const label = `${d.name} ${i.name}`;
      const about = PS.el("span", { class: "input-about" }, i.description);
      if (i.kind === "file") {
        const status = PS.el("span", { class: "input-status mono", "data-input-status": i.name });
        const accept = i.formats.flatMap((f) => FORMATS[f] || []).join(",");
        const chooser = PS.el("input", { type: "file", name: i.name, "aria-label": label,
                                         accept: accept || undefined });
        chooser.addEventListener("change", async () => {
          delete given[i.name];
          const file = chooser.files[0];
          if (!file) return status.replaceChildren();
          status.textContent = `uploading ${file.name}…`;
          try {
            const stored = await PS.upload(file);
            given[i.name] = stored.path;
            status.textContent = `${stored.name} (${stored.size} bytes)`;
            status.dataset.path = stored.path;
          } catch (error) {
            status.replaceChildren(PS.el("span", { class: "message" }, error.message));
          }
        });
        return PS.el("label", { class: "input", "data-input": i.name },
          PS.el("code", {}, i.name), chooser, status, about);
      }
      const box = PS.el("input", i.kind === "value"
        ? { type: "number", min: 1, step: 1, name: i.name, "aria-label": label }
        : { type: "text", name: i.name, "aria-label": label, placeholder: "path/to/folder",
            size: 40 });
      box.addEventListener("input", () => {
        if (box.value.trim()) given[i.name] = box.value.trim();
        else delete given[i.name];
      });
      return PS.el("label", { class: "input", "data-input": i.name },
        PS.el("code", {}, i.name), box, about);
    });
    return { form: PS.el("div", { class: "inputs" }, ...fields), values: () => ({ ...given }) };
  }

  // A plan preview and a run for ``asked()``, their answers in ``out``.
  function planAndRun(d, what, asked, disabled, out) {
    const preview = PS.el("button", { disabled, "aria-label": `plan ${d.name} / ${what}` }, "plan");
    const run = PS.el("button", { class: "primary", disabled: !d.runnable || disabled,
      "aria-label": `create run for ${d.name} / ${what}` }, "create run");
    preview.addEventListener("click", async () => {
      preview.disabled = true;
      try {
        const p = await PS.api("/api/plan", { method: "POST", body: { ...asked(), ...d.costs() } });
        const actions = p.plan.steps.map((s) => `${s.action}(${s.args.join(", ")})`);
        out.replaceChildren(PS.el("p", {}, `${p.steps} steps, ${p.plan_hash.slice(0, 19)}…`),
          PS.el("ol", {}, ...actions.slice(0, 20).map((a) => PS.el("li", { class: "mono" }, a))));
        if (actions.length > 20) out.append(PS.el("p", {}, `and ${actions.length - 20} more`));
        const learned = PS.learnedCosts(p);
        if (learned) out.append(learned);
      } catch (error) {
        out.replaceChildren(PS.el("p", { class: "message" }, error.message));
      }
      preview.disabled = false;
    });
    run.addEventListener("click", async () => {
      run.disabled = true;
      run.textContent = "binding…";
      try {
        const r = await PS.api("/api/runs", { method: "POST", body: { ...asked(), ...d.costs() } });
        location.href = `/runs/${r.run_id}/plan`;
      } catch (error) {
        out.replaceChildren(PS.el("p", { class: "message" }, error.message));
        run.disabled = false;
        run.textContent = "create run";
      }
    });
    return [preview, run];
  }

  // A domain whose inputs make the whole job (the lab's PCR): plan and run them alone.
  // A question over the served sources: the run's page shows its trace and report.
  function researchForm(sources) {
    const question = PS.el("textarea", { name: "question", rows: 2, cols: 60,
                                         "aria-label": "research question", maxlength: 10240,
                                         placeholder: "How do I read a CSV file?" });
    const ask = PS.el("button", { class: "primary", "aria-label": "research the question" },
                      "research");
    const form = PS.el("div", { class: "research" },
      PS.el("p", { class: "note" }, `a question over: ${sources.join(", ")}`), question, ask);
    ask.addEventListener("click", async () => {
      ask.disabled = true;
      try {
        const r = await PS.api("/api/research", { method: "POST",
                                                  body: { question: question.value } });
        location.href = `/research/${r.run_id}`;
      } catch (error) {
        form.append(PS.el("p", { class: "message" }, error.message));
        ask.disabled = false;
      }
    });
    return form;
  }

  function jobForm(d, inputs) {
    const out = PS.el("div", { class: "goal-plan" });
    const asked = () => ({ domain: d.name, inputs: inputs.values() });
    return PS.el("div", { class: "goal job", "data-job": d.name },
      PS.el("span", {}, "the job these inputs make"),
      ...planAndRun(d, "inputs", asked, false, out), out);
  }

  // A named goal as a form: an object for each parameter (an input, by its name, when
  // the domain takes inputs), a plan preview, a run.
  function goalForm(d, g, inputs) {
    const selects = g.parameters.map((p) => PS.el("select",
      { name: p.name, "aria-label": `${g.name} ${p.name}` },
      ...p.choices.map((c) => PS.el("option", { value: c }, c))));
    const empty = g.parameters.filter((p) => !p.choices.length).map((p) => p.name);
    const asked = () => Object.assign({ domain: d.name, goal: g.name,
      args: Object.fromEntries(selects.map((s) => [s.name, s.value])) },
      inputs ? { inputs: inputs.values() } : {});
    const out = PS.el("div", { class: "goal-plan" });
    const fields = g.parameters.map((p, i) => PS.el("label", {}, `${p.name}: `, selects[i]));
    const form = PS.el("div", { class: "goal", "data-goal": g.name },
      PS.el("code", {}, g.name), PS.el("span", {}, g.description), ...fields,
      ...planAndRun(d, g.name, asked, empty.length > 0, out), out);
    if (empty.length)
      form.append(PS.el("p", { class: "note" },
        `no object of the domain's problem fits ${empty.join(", ")}: give one in a problem file`));
    return form;
  }
})();
