extension HTMLPageScript {
  /// The call trees, top-down and bottom-up, and the flame graph, and the code that starts the
  /// page.
  static let tree = #"""
    const WEIGHTS = ["bytes at the peak", "allocated bytes", "allocations",
      "temporary allocations", "leaked bytes"];
    function stackValues() {
      if (scope.kind === "all") {
        const w = Number($("tree-weight").value);
        return {values: P.stacks.map((s) => s.weights[w]), isBytes: w !== 2 && w !== 3,
          label: WEIGHTS[w]};
      }
      const values = P.stacks.map(() => 0);
      siteFigures(scope).forEach((site, s) => { values[G.sites[s][0]] += site.live; });
      return {values: values, isBytes: true, label: scope.kind === "instant"
        ? "live bytes at " + seconds(bucketEnd(scope.b))
        : "bytes allocated in the range and live at its end"};
    }
    function frameNode(name, module, location) {
      return {name: name, module: module, location: location, children: new Map(), value: 0};
    }
    function buildTree(values, bottomUp) {
      const root = frameNode("all stacks", "", "");
      const filter = $("tree-filter").value.trim().toLowerCase();
      P.stacks.forEach((stack, s) => {
        const value = values[s];
        if (!value) return;
        if (filter && (stack.id === null || !stack.frames.some((f) =>
          (P.frames[f][0] + "\u0000" + P.frames[f][1]).toLowerCase().includes(filter)))) return;
        let path = stack.id === null ? [-1] : stack.frames.length ? stack.frames : [-2];
        if (!bottomUp && path[0] >= 0) path = path.slice().reverse();
        root.value += value;
        let node = root;
        for (const f of path) {
          const frame = f === -1 ? ["(other stacks)", "", ""]
            : f === -2 ? ["(no frames recorded)", "", ""] : P.frames[f];
          const key = frame[0] + "\u0000" + frame[1];
          let child = node.children.get(key);
          if (!child) {
            child = frameNode(frame[0], frame[1], frame[2]);
            node.children.set(key, child);
          }
          child.value += value;
          node = child;
        }
      });
      return root;
    }
    function sortedChildren(node) {
      return [...node.children.values()].sort((a, b) => b.value - a.value);
    }
    function drawCallTree(root, format) {
      const body = $("tree-body");
      const total = root.value || 1;
      const add = (node, depth, container, expand) => {
        const kids = sortedChildren(node);
        const holder = el("div", {});
        const toggle = el("span", {class: "toggle"}, kids.length ? (expand ? "\u25be" : "\u25b8")
          : "");
        const row = el("div", {class: "tree-row"}, el("span", {class: "num"}, format(node.value)),
          el("span", {class: "pct"}, (node.value / total * 100).toFixed(1) + "%"),
          el("span", {style: "padding-left:" + depth * 14 + "px"}), toggle,
          el("span", {class: "fn"}, node.name),
          el("span", {class: "module"}, [node.location, node.module].filter((t) => t)
            .join("  ")));
        let open = false;
        const show = (auto) => {
          open = true;
          toggle.textContent = "\u25be";
          kids.forEach((kid, k) => add(kid, depth + 1, holder, auto && k === 0 && depth < 60));
        };
        toggle.addEventListener("click", () => {
          if (!kids.length) return;
          if (open) { open = false; holder.replaceChildren(); toggle.textContent = "\u25b8"; }
          else show(false);
        });
        container.append(row, holder);
        if (expand && kids.length) show(true);
      };
      body.replaceChildren();
      add(root, 0, body, true);
    }
    function hue(text) {
      let h = 0;
      for (const c of text) h = (h * 31 + c.charCodeAt(0)) % 360;
      return h;
    }
    function drawFlame(root, format) {
      const width = Math.max(600, $("tree-panel").clientWidth - 30), rowH = 17;
      let zoom = root;
      const render = () => {
        const svg = el("svg:svg", {id: "flame-svg"});
        let depthMax = 0;
        const draw = (node, x0, w, depth) => {
          if (w < 0.5) return;
          depthMax = Math.max(depthMax, depth);
          const g = el("svg:g", {onclick: () => { zoom = node === zoom ? root : node; render(); }});
          g.append(el("svg:rect", {x: x0, y: depth * rowH, width: w, height: rowH - 1,
            fill: node === root ? "#c7c7cc" : "hsl(" + hue(node.module || node.name) + ",60%,72%)"}),
            el("svg:title", {}, node.name + (node.module ? "  (" + node.module + ")" : "") + "\n"
              + format(node.value)));
          if (w > 40) {
            const chars = Math.floor((w - 6) / 6.6);
            g.append(el("svg:text", {x: x0 + 3, y: depth * rowH + 12}, node.name.length > chars
              ? node.name.slice(0, Math.max(1, chars - 1)) + "\u2026" : node.name));
          }
          svg.append(g);
          let x = x0;
          for (const kid of sortedChildren(node)) {
            const kw = node.value ? w * kid.value / node.value : 0;
            draw(kid, x, kw, depth + 1);
            x += kw;
          }
        };
        draw(zoom, 0, width, 0);
        const height = (depthMax + 1) * rowH;
        svg.setAttribute("viewBox", "0 0 " + width + " " + height);
        svg.setAttribute("height", height);
        $("flame").replaceChildren(svg);
      };
      render();
    }
    function drawTree() {
      const view = $("tree-view").value;
      const {values, isBytes, label} = stackValues();
      const format = isBytes ? bytes : grouped;
      const root = buildTree(values, view === "bottom-up");
      $("tree-weight").disabled = scope.kind !== "all";
      $("tree-note").textContent = "Weighted by " + label + ": " + format(root.value) + ". "
        + (P.stacks.length - 1) + " of the trace's " + grouped(R.stack_count)
        + " stacks (the top ones for each weight); the rest are summed as (other stacks)."
        + (view === "flame" ? " Click a frame to zoom in, again to zoom out." : "");
      $("tree-body").style.display = view === "flame" ? "none" : "";
      $("flame").style.display = view === "flame" ? "" : "none";
      if (view === "flame") drawFlame(root, format); else drawCallTree(root, format);
    }
    """#

  static let main = #"""
    scopeListeners.push(drawCategories, drawTree);
    $("category-search").addEventListener("input", drawCategories);
    for (const id of ["tree-view", "tree-weight"]) $(id).addEventListener("change", drawTree);
    $("tree-filter").addEventListener("input", drawTree);
    drawSummary();
    drawTimeline();
    drawLeaks();
    drawFootprint();
    // A link can open the page at an instant (#at=SECONDS) or a range (#from=S&to=S), with
    // a view of the call tree (tree=top-down|bottom-up|flame, weight=0…4, filter=TEXT).
    const linked = new URLSearchParams(location.hash.slice(1));
    if (linked.has("tree")) $("tree-view").value = linked.get("tree");
    if (linked.has("weight")) $("tree-weight").value = linked.get("weight");
    if (linked.has("filter")) $("tree-filter").value = linked.get("filter");
    const linkedNs = (name) => Math.round(Number(linked.get(name)) * 1e9);
    if (linked.has("at")) setScope({kind: "instant", b: bucketOf(linkedNs("at"))});
    else if (linked.has("to")) setScope({kind: "range", a: bucketOf(linkedNs("from") + 1),
      b: bucketOf(linkedNs("to"))});
    else setScope({kind: "all"});
    document.body.setAttribute("data-ready", "true");
    """#
}
