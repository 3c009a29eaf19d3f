// plansmith web: helpers shared by every page (no framework, no CDN).
"use strict";
const PS = (() => {
  const params = new URLSearchParams(location.search);
  if (params.get("token")) sessionStorage.setItem("plansmith-token", params.get("token"));
  const token = () => sessionStorage.getItem("plansmith-token") || "";

  async function api(path, options = {}) {
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    if (token()) headers.Authorization = "Bearer " + token();
    const method = options.method || "GET";
    // every state-changing request is JSON, bodyless or not (the server refuses any
    // other with a 415: a page of another site cannot send it without a preflight)
    if (options.body !== undefined || method !== "GET") headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return answer(response);
  }

  async function answer(response) {
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      const e = (data && data.error) || { message: response.statusText };
      const where = e.location ? ` (${e.location})` : "";
      const hint = e.hint ? ` Hint: ${e.hint}` : "";
      throw new Error(`${e.message}${where}.${hint}`);
    }
    return data;
  }

  // a file for a file input: stored by the server, which answers with its path
  // (multipart, with the header the server asks of an upload against cross-site posts)
  async function upload(file) {
    const headers = { Accept: "application/json", "X-Plansmith-Upload": "1" };
    if (token()) headers.Authorization = "Bearer " + token();
    const body = new FormData();
    body.append("file", file);
    return answer(await fetch("/api/uploads", { method: "POST", headers, body }));
  }

  function events(path, after) {
    const q = new URLSearchParams();
    if (after) q.set("after", String(after));
    if (token()) q.set("token", token());
    return new EventSource(path + (q.toString() ? "?" + q : ""));
  }

  // el("div", {class: "x", onclick: f}, "text", child...)
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) node.append(c instanceof Node ? c : String(c));
    return node;
  }

  function message(text, info = false) {
    const box = document.getElementById("message");
    if (!box) return;
    box.hidden = !text;
    box.textContent = text || "";
    box.className = "message" + (info ? " info" : "");
  }

  // The costs a plan was made with (POST /api/plan's ``costs`` and ``learned_costs``):
  // null for the declared ones; else each action whose cost the run log taught, its
  // declared cost -> the learned one, from how many calls in how many runs.
  function learnedCosts(out) {
    if (out.costs !== "learned") return null;
    const n = (v) => String(Number(v.toFixed(2)));
    const many = (k, word) => `${k} ${word}${k === 1 ? "" : "s"}`;
    const box = el("div", { class: "learned-costs", "data-learned": out.learned_costs.length });
    if (!out.learned_costs.length) {
      box.append(el("p", { class: "note" },
        "learned costs: none yet (the run log has no call of these actions), so the declared ones"));
      return box;
    }
    box.append(el("p", {}, "costs learned from the run log:"),
      el("ul", {}, ...out.learned_costs.map((c) => el("li", { "data-action": c.action, title: c.why },
        el("code", {}, c.action), ` ${n(c.declared)} → ${n(c.cost)} `,
        el("span", { class: "note" },
          `(declared → learned, from ${many(c.calls, "call")} in ${many(c.runs, "run")})`)))));
    return box;
  }

  const call = (step) => `${step.action}(${(step.args || []).join(", ")})`;
  const ms = (v) => (v === null || v === undefined ? "" : v < 1000 ? `${v.toFixed(1)} ms`
                                                      : `${(v / 1000).toFixed(2)} s`);
  const when = (iso) => (iso ? Date.parse(iso) : NaN);
  return { api, upload, events, el, message, call, ms, when, token, learnedCosts };
})();
