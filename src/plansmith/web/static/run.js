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
    for (const s of run.steps) latest = Math.max(latest, PS.when(s.ended) || PS.when(s.started) || 0);
    refresh();
    return run.last_seq;
  }

  // The statuses (web_status in _views.py, and the run view's own) of a run that has not
  // ended: cancelling it means something. Once it ended (succeeded, failed, cancelled)
  // the Cancel button is hidden and disabled, as soon as the page learns it (RunFinished).
  const CANCELLABLE = ["created", "planned", "awaiting approval", "approved", "running",
                       "interrupted"];
  let cancelling = false;  // a cancel request is in flight: the button stays disabled

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
    if (e.type === "RunFinished") {
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
                 "Replanned", "RunCancelled", "RunFinished"];
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
