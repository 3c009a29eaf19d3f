// plansmith web: the plan DAG as a layered graph (SVG), the HTN tree, the step panel.
"use strict";
const DAG = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const W = 230, H = 58, GX = 24, GY = 26, PAD = 16;

  function svg(tag, attrs = {}, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

  // Layers by longest path from the sources; order in a layer by the mean position of
  // the step's predecessors (one sweep), so parallel branches sit side by side.
  function layout(steps) {
    const byId = new Map(steps.map((s) => [s.id, s]));
    const layer = new Map();
    const indeg = new Map(steps.map((s) => [s.id, 0]));
    const next = new Map(steps.map((s) => [s.id, []]));
    for (const s of steps)
      for (const d of s.after || [])
        if (byId.has(d)) { indeg.set(s.id, indeg.get(s.id) + 1); next.get(d).push(s.id); }
    const queue = steps.filter((s) => indeg.get(s.id) === 0).map((s) => s.id);
    for (const id of queue) layer.set(id, 0);
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i];
      for (const n of next.get(id)) {
        layer.set(n, Math.max(layer.get(n) || 0, layer.get(id) + 1));
        indeg.set(n, indeg.get(n) - 1);
        if (indeg.get(n) === 0) queue.push(n);
      }
    }
    for (const s of steps) if (!layer.has(s.id)) layer.set(s.id, 0); // a cycle: never in a plan
    const rows = [];
    for (const s of steps) (rows[layer.get(s.id)] ||= []).push(s.id);
    const pos = new Map();
    rows.forEach((row, r) => {
      if (r > 0) {
        const key = (id) => {
          const deps = (byId.get(id).after || []).filter((d) => pos.has(d));
          return deps.length ? deps.reduce((a, d) => a + pos.get(d).i, 0) / deps.length : 1e9;
        };
        const keys = new Map(row.map((id) => [id, key(id)]));
        row.sort((a, b) => keys.get(a) - keys.get(b));
      }
      row.forEach((id, i) => pos.set(id, { r, i }));
    });
    const widest = Math.max(1, ...rows.map((row) => row.length));
    const width = widest * (W + GX) - GX + 2 * PAD;
    for (const row of rows) {
      const offset = (width - (row.length * (W + GX) - GX)) / 2;
      row.forEach((id, i) => {
        const p = pos.get(id);
        p.x = offset + i * (W + GX);
        p.y = PAD + p.r * (H + GY);
      });
    }
    return { pos, width, height: PAD * 2 + rows.length * (H + GY) - GY, layers: rows.length };
  }

  // Draw ``steps`` into ``container``; returns {nodes: Map id -> <g>, layout}.
  function draw(container, steps, onSelect) {
    const lay = layout(steps);
    const root = svg("svg", { width: lay.width, height: Math.max(lay.height, 40),
                              role: "group", "aria-label": "plan graph" });
    const edges = svg("g");
    const nodes = new Map();
    const frag = document.createDocumentFragment();
    for (const s of steps) {
      const p = lay.pos.get(s.id);
      for (const d of s.after || []) {
        const q = lay.pos.get(d);
        if (!q) continue;
        const x1 = q.x + W / 2, y1 = q.y + H, x2 = p.x + W / 2, y2 = p.y, m = (y1 + y2) / 2;
        edges.append(svg("path", { class: "edge", d: `M${x1},${y1} C${x1},${m} ${x2},${m} ${x2},${y2}` }));
      }
      const g = svg("g", { class: "node st-" + shown(s), "data-step": s.id,
                           "data-state": shown(s),
                           transform: `translate(${p.x},${p.y})`,
                           tabindex: 0, role: "button",
                           "aria-label": `step ${s.id}: ${PS.call(s)}` });
      g.append(svg("title", {}, `${s.id}: ${PS.call(s)}\ntier: ${s.tier}` +
                   (s.server ? `\nbinding: ${s.server}/${s.tool}` : "")));
      g.append(svg("rect", { width: W, height: H, rx: 6 }));
      g.append(svg("text", { class: "id", x: 8, y: 16 }, s.id));
      g.append(svg("text", { class: "tier", x: W - 8, y: 16, "text-anchor": "end" }, s.tier || ""));
      g.append(svg("text", { class: "act", x: 8, y: 33 }, clip(PS.call(s), 34)));
      g.append(svg("text", { class: "bind", x: 8, y: 49 },
                   clip(s.server ? `${s.server} / ${s.tool}` : "not bound yet", 38)));
      const select = () => {
        for (const n of nodes.values()) n.classList.remove("sel");
        g.classList.add("sel");
        onSelect && onSelect(s);
      };
      g.addEventListener("click", select);
      g.addEventListener("keydown", (e) => {  // a step is a button: Enter or Space opens it
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        select();
      });
      nodes.set(s.id, g);
      frag.append(g);
    }
    root.append(edges, frag);
    container.replaceChildren(root);
    return { nodes, layout: lay };
  }

  // A step's state as drawn: the run view's, and `retrying` for a running step that
  // runs again after a failed attempt.
  function shown(s) {
    return s.state === "running" && s.retrying ? "retrying" : s.state || "pending";
  }

  function setState(g, state) {
    g.setAttribute("class", g.getAttribute("class").replace(/st-[a-z]+/, "st-" + state));
    g.setAttribute("data-state", state);
  }

  function detail(box, s) {
    const dl = PS.el("dl");
    const row = (k, v) => dl.append(PS.el("dt", {}, k), PS.el("dd", {}, v));
    row("step", s.id);
    row("action", s.action);
    row("args", (s.args || []).join(", ") || "—");
    row("tier", s.tier || "—");
    row("after", (s.after || []).join(", ") || "—");
    if (s.server) row("binding", `${s.server} / ${s.tool}`);
    if (s.arguments !== undefined && s.arguments !== null)
      dl.append(PS.el("dt", {}, "arguments"),
                PS.el("dd", {}, PS.el("pre", {}, JSON.stringify(s.arguments, null, 1))));
    if (s.state) row("state", shown(s));
    if (s.attempts) row("attempts", String(s.attempts));
    if (s.duration_ms !== null && s.duration_ms !== undefined) row("duration", PS.ms(s.duration_ms));
    if (s.error) row("error", s.error);
    else if (s.state === "skipped" && s.message) row("skipped", s.message);
    box.replaceChildren(dl);
  }

  // The HTN decomposition: nested <details>, tasks with their method, primitive steps.
  function tree(box, nodes) {
    if (!nodes || !nodes.length) return;
    const item = (n, depth) => {
      const label = `${n.task}(${(n.args || []).join(", ")})`;
      if (!n.children || !n.children.length)
        return PS.el("li", { class: "prim" }, (n.step ? n.step + " " : "") + label);
      const d = PS.el("details", { open: depth < 2 },
        PS.el("summary", {}, label, " ", PS.el("span", { class: "method" }, n.method ? `[${n.method}]` : "")));
      const ul = PS.el("ul");
      for (const c of n.children) ul.append(item(c, depth + 1));
      d.append(ul);
      return PS.el("li", {}, d);
    };
    const ul = PS.el("ul");
    for (const n of nodes) ul.append(item(n, 0));
    box.replaceChildren(ul);
  }

  return { draw, layout, shown, setState, detail, tree };
})();
