// plansmith web: the run page. Steps are coloured live from the run's SSE stream.
"use strict";
(async () => {
  const runId = document.body.dataset.runId;
  const $ = (id) => document.getElementById(id);
  $("plan-link").href = `/runs/${runId}/plan`;
  $("report-link").href = `/runs/${runId}/report`;
  const legend = $("legend");
  for (const st of ["pending", "running", "retrying", "succeeded", "skipped", "failed", "dropped",
                    "cancelled"])
    legend.append(PS.el("span", { style: `--c: var(--${st})` }, st));

  let run, steps, nodes, source = null, latest = 0, dirty = false;
  // The server's clock seen from here: event times are the server's, so the page's
  // "now" is Date.now() + skew, skew being the largest (event time - arrival time) seen.
  // A running step's bar ends at that "now", redrawn by a timer while the run runs.
  let skew = null, ticker = null;
  const serverNow = () => Math.max(latest, Date.now() + (skew ?? 0));

  async function load() {
    run = await PS.api(`/api/runs/${runId}`);
    steps = new Map(run.steps.map((s) => [s.id, s]));
    nodes = DAG.draw($("graph"), run.steps, (s) => DAG.detail($("detail"), s)).nodes;
    lineage();
    questions();
    for (const s of run.steps) latest = Math.max(latest, PS.when(s.ended) || PS.when(s.started) || 0);
    refresh();
    return run.last_seq;
  }

  // The statuses (web_status in _views.py, and the run view's own) of a run that has not
  // ended: cancelling it means something. Once it ended (succeeded, failed, cancelled)
  // the Cancel button is hidden and disabled, as soon as the page learns it (RunFinished).
  const CANCELLABLE = ["created", "planned", "awaiting approval", "approved", "running",
                       "awaiting answer", "interrupted"];
  let cancelling = false;  // a cancel request is in flight: the button stays disabled
  const ENDED = ["succeeded", "failed", "cancelled"];

  function setStatus(status, reason) {
    run.status = status;
    document.body.dataset.status = status;
    const badge = $("state");
    badge.textContent = status;
    badge.className = "badge " + status.split(" ")[0];
    const cancellable = CANCELLABLE.includes(status);
    const cancel = $("cancel");
    cancel.hidden = !cancellable;
    cancel.disabled = !cancellable || cancelling;
    document.body.dataset.cancellable = String(cancellable);
    if (!cancellable && source) { source.close(); source = null; }  // nothing more will come
    if (reason) PS.message(reason, status === "succeeded");
    if (status === "running" && ticker === null) ticker = setInterval(refresh, 250);
    if (status !== "running" && ticker !== null) { clearInterval(ticker); ticker = null; }
    if (ENDED.includes(status)) offerContinue().catch((err) => PS.message(err.message));
  }

  // A follow-up run: a link to the run it follows up, and the outputs of earlier runs
  // its steps read (those steps are not called again).
  function lineage() {
    const link = $("after-link");
    link.hidden = !run.after;
    if (!run.after) return;
    link.href = `/runs/${encodeURIComponent(run.after)}`;
    link.textContent = `after ${run.after}`;
    const box = $("inherited");
    box.hidden = !run.inherited.length;
    box.textContent = "inherited (not called again): " + run.inherited
      .map((i) => `${i.producer} → ${i.read_by.join(", ")}`).join("; ");
  }

  // "Continue from here": once the run ended, a follow-up of it, with a problem or a
  // named goal of its domain, planned from its final state (POST /api/runs, after).
  let offered = false;
  async function offerContinue() {
    if (offered || !ENDED.includes(run.status)) return;
    offered = true;
    const domains = await PS.api("/api/domains");
    const asked = (run.inputs && run.inputs.asked) || {};
    const d = domains.find((x) => x.name === asked.domain);  // a run the web made
    if (!d || d.kind !== "file" || !d.runnable) return;
    const select = $("continue-goal"), args = $("continue-args"), form = $("continue");
    for (const g of d.goals) select.append(PS.el("option", { value: "goal:" + g.name }, `goal ${g.name}`));
    for (const p of d.problems) select.append(PS.el("option", { value: "problem:" + p }, `problem ${p}`));
    if (!select.options.length) return;
    const chosen = () => {
      const at = select.value.indexOf(":");
      return [select.value.slice(0, at), select.value.slice(at + 1)];
    };
    const drawArgs = () => {
      const [kind, name] = chosen();
      const goal = kind === "goal" ? d.goals.find((g) => g.name === name) : null;
      args.replaceChildren(...(goal ? goal.parameters : []).map((p) => PS.el("label", {}, ` ${p.name} `,
        PS.el("select", { "data-param": p.name }, ...p.choices.map((c) => PS.el("option", { value: c }, c))))));
    };
    select.addEventListener("change", drawArgs);
    drawArgs();
    form.hidden = false;
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const [kind, name] = chosen();
      const body = { domain: d.name, after: runId };
      if (kind === "problem") body.problem = name;
      else {
        body.goal = name;
        body.args = {};
        for (const s of args.querySelectorAll("select")) body.args[s.dataset.param] = s.value;
      }
      $("continue-start").disabled = true;
      try {
        const made = await PS.api("/api/runs", { method: "POST", body });
        location.href = `/runs/${encodeURIComponent(made.run_id)}`;
      } catch (error) {
        PS.message(error.message);
        $("continue-start").disabled = false;
      }
    });
  }

  // Ask steps: a run that waits for a person's answer ("awaiting answer") shows each
  // question with a form made from its answer schema (enum: its choices; boolean: yes or
  // no; number: a number input with its bounds; string: a text input with its limits).
  // The answer is posted (POST /api/runs/{id}/answers); the server checks it against the
  // schema (a refusal says why, here, and the run keeps waiting) and the run goes on,
  // followed live over SSE (AnswerRecorded, then its steps) to its end.
  function questions() {
    const box = $("questions");
    const waiting = run.awaiting_answer || [];
    for (const form of [...box.querySelectorAll("form[data-step]")])
      if (!waiting.some((a) => a.step === form.dataset.step)) form.remove();  // answered
    for (const a of waiting)
      if (![...box.children].some((f) => f.dataset.step === a.step)) box.append(answerForm(a));
    box.hidden = !waiting.length;
    document.body.dataset.awaitingAnswer = waiting.map((a) => a.step).join(" ");
    if (nodes) for (const [id, g] of nodes) g.classList.toggle("asking", waiting.some((a) => a.step === id));
  }

  function answerForm(a) {
    const schema = a.answer || {};
    const preset = schema.default !== undefined ? schema.default : a.assumed;
    const name = `answer-${a.step}`;
    const error = PS.el("p", { class: "message answer-error", role: "alert", hidden: true });
    const submit = PS.el("button", { type: "submit", class: "primary" }, "Answer");
    const [field, read] = answerField(schema, name, preset);
    const form = PS.el("form", { class: "answer", "data-step": a.step, novalidate: true,
                                 "aria-label": `answer to step ${a.step}` },
      PS.el("p", { class: "question" }, PS.el("strong", {}, `${a.step} ${a.action}: `), a.question),
      field,
      PS.el("p", { class: "hint" }, describe(schema, a.assumed)),
      PS.el("div", {}, submit),
      error);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const fail = (text) => {
        error.textContent = text;
        error.hidden = false;
        submit.disabled = false;
        document.body.dataset.answerRefused = a.step;
      };
      let value;
      try { value = read(); } catch (e) { fail(e.message); return; }
      submit.disabled = true;
      error.hidden = true;
      try {
        const sent = await PS.api(`/api/runs/${runId}/answers`,
                                  { method: "POST", body: { step: a.step, answer: value } });
        delete document.body.dataset.answerRefused;
        run.awaiting_answer = (run.awaiting_answer || []).filter((w) => w.step !== a.step);
        questions();
        if (sent.status && !ENDED.includes(run.status)) setStatus(sent.status, null);
        PS.message(`answered ${JSON.stringify(value)} to ${a.step}: the run goes on`, true);
      } catch (e) {
        fail(e.message);
      }
    });
    return form;
  }

  // The input(s) of an answer schema, and how to read the value to post from them.
  function answerField(schema, name, preset) {
    const radios = (options) => {
      const box = PS.el("fieldset", { class: "choices" });
      for (const [label, value] of options)
        box.append(PS.el("label", {}, PS.el("input", { type: "radio", name, value,
          checked: value === String(preset) }), ` ${label}`));
      const read = () => {
        const on = box.querySelector("input:checked");
        if (!on) throw new Error("choose an answer");
        return on.value;
      };
      return [box, read];
    };
    if (schema.type === "enum") {
      const choices = schema.choices || [];
      if (choices.length <= 6) return radios(choices.map((c) => [c, c]));
      const select = PS.el("select", { name, "aria-label": "answer" },
        ...choices.map((c) => PS.el("option", { value: c, selected: c === preset }, c)));
      return [select, () => select.value];
    }
    if (schema.type === "boolean") {
      const [box, read] = radios([["yes", "true"], ["no", "false"]]);
      return [box, () => read() === "true"];
    }
    if (schema.type === "number") {
      const input = PS.el("input", { type: "number", name, "aria-label": "answer",
        min: schema.minimum, max: schema.maximum, step: schema.integer ? 1 : "any",
        value: typeof preset === "number" ? preset : undefined });
      return [input, () => {
        if (input.value.trim() === "" || Number.isNaN(input.valueAsNumber))
          throw new Error("give a number");
        return input.valueAsNumber;
      }];
    }
    const input = PS.el("input", { type: "text", name, "aria-label": "answer", size: 40,
      minlength: schema.min_length, maxlength: schema.max_length, pattern: schema.pattern,
      value: typeof preset === "string" ? preset : undefined });
    return [input, () => input.value];
  }

  function describe(schema, assumed) {
    const parts = [];
    if (schema.type === "enum") parts.push("one of: " + (schema.choices || []).join(", "));
    else if (schema.type === "boolean") parts.push("yes or no");
    else if (schema.type === "number") {
      parts.push(schema.integer ? "a whole number" : "a number");
      if (schema.minimum !== undefined) parts.push(`>= ${schema.minimum}`);
      if (schema.maximum !== undefined) parts.push(`<= ${schema.maximum}`);
    } else {
      parts.push("text");
      if (schema.min_length !== undefined) parts.push(`at least ${schema.min_length} characters`);
      if (schema.max_length !== undefined) parts.push(`at most ${schema.max_length} characters`);
      if (schema.pattern !== undefined) parts.push(`matching ${schema.pattern}`);
    }
    if (assumed !== null && assumed !== undefined)
      parts.push(`the plan assumed ${JSON.stringify(assumed)}`);
    return parts.join(" · ");
  }

  function refresh() {
    if (dirty) return;
    dirty = true;
    requestAnimationFrame(() => { dirty = false; paint(); });
  }

  function paint() {
    const counts = { pending: 0, running: 0, retrying: 0, succeeded: 0, skipped: 0, failed: 0,
                     dropped: 0, cancelled: 0 };
    for (const s of steps.values()) counts[DAG.shown(s)] = (counts[DAG.shown(s)] || 0) + 1;
    const live = steps.size - counts.dropped;
    const done = counts.succeeded + counts.skipped;  // skipped: ended, no call (value absent)
    const pct = live ? (100 * done) / live : 0;
    $("bar").style.width = pct.toFixed(1) + "%";
    $("bar-label").textContent = `${done} / ${live} done`;
    const progress = $("progress");
    progress.setAttribute("aria-valuenow", String(done));
    progress.setAttribute("aria-valuemax", String(live));
    progress.setAttribute("aria-valuetext", `${done} of ${live} steps done`);
    $("summary").textContent = Object.entries(counts).filter(([, n]) => n)
      .map(([k, n]) => `${n} ${k}`).join(" · ");
    document.body.dataset.done = String(done);
    setStatus(run.status, null);
    timeline();
  }

  function timeline() {
    const started = [...steps.values()].filter((s) => s.started)
      .sort((a, b) => PS.when(a.started) - PS.when(b.started));
    const box = $("timeline");
    if (!started.length) { box.textContent = "no step has started yet"; return; }
    const t0 = PS.when(run.started) || PS.when(started[0].started);
    const now = run.status === "running" ? serverNow() : latest;
    const end = Math.max(now, ...started.map((s) => PS.when(s.ended) || 0), t0 + 1);
    const LABEL = 190, ROW = 14, width = Math.max(600, box.clientWidth - 4);
    const scale = (width - LABEL - 60) / (end - t0);
    const NS = "http://www.w3.org/2000/svg";
    const root = document.createElementNS(NS, "svg");
    root.setAttribute("width", width);
    root.setAttribute("height", started.length * ROW + 20);
    const add = (tag, attrs, text) => {
      const n = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
      if (text !== undefined) n.textContent = text;
      root.append(n);
      return n;
    };
    add("text", { x: LABEL, y: 11 }, "0 ms");
    add("text", { class: "axis-end", x: width - 4, y: 11, "text-anchor": "end" }, PS.ms(end - t0));
    started.forEach((s, i) => {
      const y = 16 + i * ROW;
      const a = PS.when(s.started);
      const b = s.ended ? PS.when(s.ended) : Math.max(now, a);
      add("text", { x: 4, y: y + 10 }, `${s.id} ${s.action}`.slice(0, 30));
      const bar = add("rect", { class: "bar st-" + DAG.shown(s), x: LABEL + (a - t0) * scale, y,
                                width: Math.max(2, (b - a) * scale), height: ROW - 3 });
      bar.append(Object.assign(document.createElementNS(NS, "title"),
                               { textContent: `${s.id}: ${PS.ms(s.duration_ms ?? b - a)}` }));
      if (s.duration_ms !== null && s.duration_ms !== undefined)
        add("text", { x: LABEL + (b - t0) * scale + 4, y: y + 10 }, PS.ms(s.duration_ms));
    });
    box.replaceChildren(root);
  }

  // While the run is reloaded (after a replan) events wait, and then those the reloaded
  // run does not hold yet (seq after its last_seq) are applied in order.
  let received = 0, reloading = false;
  const waiting = [];
  function receive(e) {
    const t = PS.when(e.time);
    if (t) skew = Math.max(skew ?? -Infinity, t - Date.now());
    document.body.dataset.sseEvents = String(++received);
    if (e.type === "StepSucceeded")
      document.body.dataset.sseDone = String(Number(document.body.dataset.sseDone || 0) + 1);
    if (reloading) waiting.push(e);
    else onEvent(e);
  }

  function reload() {
    reloading = true;
    load().then((seq) => {
      reloading = false;
      for (const e of waiting.splice(0)) if (e.seq > seq) onEvent(e);
    }).catch((err) => { reloading = false; PS.message(err.message); });
  }

  // The server moves the run's view on by each event and sends the steps it changed,
  // as the API shows them: they are drawn as they come, nothing is folded here.
  function onEvent(e) {
    const t = PS.when(e.time);
    if (t) latest = Math.max(latest, t);
    if (e.type === "RunStarted" && !run.started) run.started = e.time;
    for (const changed of e.changed || []) {
      const s = steps.get(changed.id);
      if (!s) continue;
      Object.assign(s, changed);
      const g = nodes.get(s.id);
      if (g) DAG.setState(g, DAG.shown(s));
    }
    if (e.type === "PlanApproved" && run.status !== "running") run.status = "running";
    if (e.type === "Replanned" || e.type === "PlanReady") {
      reload();
      return;
    }
    if (e.type === "AwaitingAnswer") {  // the run stopped at a question: its form
      const waiting = (run.awaiting_answer || []).filter((w) => w.step !== e.step);
      waiting.push({ step: e.step, action: e.action, question: e.question, answer: e.answer,
                     assumed: e.assumed, since: e.time });
      run.awaiting_answer = waiting;
      run.status = "awaiting answer";
      questions();
    }
    if (e.type === "AnswerRecorded") {  // answered (here, or elsewhere): the run goes on
      run.awaiting_answer = (run.awaiting_answer || []).filter((w) => w.step !== e.step);
      if (!run.awaiting_answer.length && run.status === "awaiting answer") run.status = "running";
      questions();
    }
    if (e.type === "RunFinished") {
      run.awaiting_answer = [];
      questions();
      run.status = e.state;
      if (source) source.close();
      $("status-line").textContent = "finished";
      setStatus(e.state, e.reason || `run ${e.state}`);
    }
    refresh();
  }

  const types = ["RunCreated", "PlanReady", "AwaitingApproval", "PlanApproved", "RunStarted",
                 "StepStarted", "StepProgress", "StepSucceeded", "StepFailed", "StepSkipped",
                 "StepRetrying",
                 "Replanned", "AwaitingAnswer", "AnswerRecorded", "RunCancelled", "RunFinished"];
  try {
    const after = await load();
    setStatus(run.status, run.reason);
    if (!["succeeded", "failed", "cancelled"].includes(run.status)) {
      source = PS.events(`/api/runs/${runId}/events`, after);
      for (const type of types)
        source.addEventListener(type, (m) => receive(JSON.parse(m.data)));
      source.onerror = () => { $("status-line").textContent = "reconnecting…"; };
      source.onopen = () => { $("status-line").textContent = "live"; };
    }
  } catch (error) {
    PS.message(error.message);
  }
  $("cancel").addEventListener("click", async () => {
    cancelling = true;
    $("cancel").disabled = true;
    try {
      await PS.api(`/api/runs/${runId}/cancel`, { method: "POST", body: {} });
    } catch (error) {
      PS.message(error.message);
      cancelling = false;
      if (run) setStatus(run.status, null);  // still live (e.g. another engine drives it)
    }
  });
})();
