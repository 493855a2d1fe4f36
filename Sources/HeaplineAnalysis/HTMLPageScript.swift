/// The page's scripts: the shared helpers and the timeline. The others are in extensions,
/// one panel each. Plain JavaScript with no library: the charts are inline SVG.
enum HTMLPageScript {
  static let common = #"""
    "use strict";
    const DATA = JSON.parse(document.getElementById("heapline-data").textContent);
    const R = DATA.report, P = DATA.page, G = P.grid;
    const $ = (id) => document.getElementById(id);
    const SVG = "http://www.w3.org/2000/svg";
    const COLORS = ["#0a64d8", "#f5a623", "#34a853", "#d93f8f", "#7e57c2", "#00a3a3",
      "#c0ca33", "#ef6c00", "#8d6e63", "#90a4ae"];
    function el(tag, attrs, ...children) {
      const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4))
        : document.createElement(tag);
      for (const [key, value] of Object.entries(attrs || {})) {
        if (value === null || value === undefined) continue;
        if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value);
      }
      for (const child of children.flat()) {
        if (child === null || child === undefined) continue;
        node.append(child instanceof Node ? child : String(child));
      }
      return node;
    }
    function grouped(n) { return n === null || n === undefined ? "\u2013"
      : Number(n).toLocaleString("en-US"); }
    function human(n) {
      const units = ["KiB", "MiB", "GiB", "TiB"];
      let value = n, unit = -1;
      while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
      return unit < 0 ? n + " B" : value.toFixed(2) + " " + units[unit];
    }
    function bytes(n) {
      if (n === null || n === undefined) return "\u2013";
      return grouped(n) + " B" + (Math.abs(n) >= 1024 ? " (" + human(Math.abs(n)) + ")" : "");
    }
    function seconds(ns) {
      if (ns === null || ns === undefined) return "\u2013";
      return (ns / 1e9).toFixed(9).replace(/0+$/, "").replace(/\.$/, "") + " s";
    }
    function frameText(index) {
      const frame = P.frames[index];
      return frame[0] + (frame[2] ? "  " + frame[2] : "") + (frame[1] ? "  (" + frame[1] + ")" : "");
    }
    function framesBlock(indices) {
      return el("div", {class: "frames"},
        indices.length ? indices.map((f, i) => "#" + i + " " + frameText(f)).join("\n")
          : "(no frames recorded)");
    }
    function showTip(event, content) {
      const tip = $("tip");
      tip.replaceChildren(content);
      tip.style.display = "block";
      const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      const y = Math.min(event.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
      tip.style.left = x + "px";
      tip.style.top = y + "px";
    }
    function hideTip() { $("tip").style.display = "none"; }
    function bucketEnd(b) { return Math.min((b + 1) * G.bucket_ns, G.end_ns); }
    function bucketOf(ns) {
      return ns <= 0 ? 0 : Math.min(Math.floor((ns - 1) / G.bucket_ns), G.buckets - 1);
    }
    // What the grid gives for the scope: per site, for an instant the state at its end
    // (live, and all allocated up to then), for a range what was allocated in it and is live
    // at its end.
    function siteFigures(scope) {
      const sites = G.sites.map(() => ({live: 0, liveCount: 0, total: 0, totalCount: 0}));
      const cells = G.cells;
      for (let k = 0; k < cells.length; k += 5) {
        const site = sites[cells[k]], i = cells[k + 1], j = cells[k + 2];
        const count = cells[k + 3], size = cells[k + 4];
        if (scope.kind === "instant") {
          if (i > scope.b) continue;
          site.total += size; site.totalCount += count;
          if (j > scope.b) { site.live += size; site.liveCount += count; }
        } else if (i >= scope.a && i <= scope.b && j > scope.b) {
          site.live += size; site.liveCount += count;
        }
      }
      return sites;
    }
    let scope = {kind: "all"};
    const scopeListeners = [];
    function setScope(next) {
      scope = next;
      const bar = $("scope-bar");
      if (scope.kind === "all") {
        bar.replaceChildren("Showing the whole trace. Click or drag in the timeline to look at "
          + "an instant or a range.");
      } else {
        const text = scope.kind === "instant"
          ? "Showing the state at " + seconds(bucketEnd(scope.b)) + ", as report --at "
            + (bucketEnd(scope.b) / 1e9) + " gives it: "
          : "Showing what was allocated after " + seconds(scope.a * G.bucket_ns) + " up to "
            + seconds(bucketEnd(scope.b)) + " and is still live then: ";
        let live = 0, count = 0;
        for (const site of siteFigures(scope)) { live += site.live; count += site.liveCount; }
        bar.replaceChildren(text, el("b", {id: "scope-live"}, bytes(live)), " in "
          + grouped(count) + " blocks. ",
          el("button", {onclick: () => setScope({kind: "all"})}, "Whole trace"));
      }
      for (const listener of scopeListeners) listener();
    }
    """#

  static let timeline = #"""
    const hiddenLines = new Set();
    function drawTimeline() {
      const T = P.timeline, rows = T.rows, cats = T.categories, base = T.columns.length;
      const width = Math.max(600, $("timeline").clientWidth || 1000), height = 280;
      const left = 86, right = 16, top = 16, bottom = 30;
      const plotW = width - left - right, plotH = height - top - bottom;
      const end = Math.max(1, T.end_ns);
      let maxY = 1;
      for (const row of rows) {
        maxY = Math.max(maxY, row[1], hiddenLines.has(6) ? 0 : row[6],
          hiddenLines.has(7) ? 0 : row[7] || 0);
      }
      const x = (ns) => left + ns / end * plotW, y = (v) => top + plotH - v / maxY * plotH;
      const svg = el("svg:svg", {viewBox: "0 0 " + width + " " + height, height: height,
        id: "timeline-svg"});
      for (let k = 0; k <= 4; k++) {
        const v = maxY * k / 4;
        svg.append(el("svg:line", {x1: left, x2: left + plotW, y1: y(v), y2: y(v),
          stroke: "#e5e5ea"}));
        svg.append(el("svg:text", {x: left - 6, y: y(v) + 4, "text-anchor": "end",
          "font-size": 11, fill: "#6e6e73"}, human(Math.round(v))));
      }
      for (let k = 0; k <= 5; k++) {
        const anchor = k === 0 ? "start" : k === 5 ? "end" : "middle";
        svg.append(el("svg:text", {x: x(end * k / 5), y: height - 10, "text-anchor": anchor,
          "font-size": 11, fill: "#6e6e73"}, Number((end * k / 5 / 1e9).toPrecision(4)) + " s"));
      }
      const points = [[0, new Array(cats.length).fill(0)]].concat(rows.map((row) =>
        [row[0], row.slice(base)]));
      let below = points.map(() => 0);
      const legend = $("timeline-legend");
      legend.replaceChildren();
      cats.forEach((name, c) => {
        const above = points.map((p, k) => below[k] + p[1][c]);
        const path = points.map((p, k) => (k ? "L" : "M") + x(p[0]) + " " + y(above[k])).join("")
          + points.map((p, k) => "L" + x(points[points.length - 1 - k][0]) + " "
            + y(below[points.length - 1 - k])).join("") + "Z";
        const color = COLORS[c % COLORS.length];
        svg.append(el("svg:path", {d: path, fill: color, "fill-opacity": 0.75, stroke: "none"}));
        legend.append(el("span", {}, el("span", {class: "swatch", style: "background:" + color}),
          name));
        below = above;
      });
      const line = (column, color, name, dash) => {
        const usable = rows.filter((row) => row[column] !== null);
        if (!usable.some((row) => row[column] > 0)) return;
        const hidden = hiddenLines.has(column);
        if (!hidden) {
          svg.append(el("svg:path", {d: usable.map((row, k) => (k ? "L" : "M") + x(row[0]) + " "
            + y(row[column])).join(""), fill: "none", stroke: color, "stroke-width": 1.6,
            "stroke-dasharray": dash}));
        }
        // A line far above malloc's bytes flattens them: clicking its name takes it off the
        // scale.
        legend.append(el("span", {style: "cursor:pointer;opacity:" + (hidden ? 0.4 : 1),
          title: (hidden ? "Show " : "Hide ") + name, onclick: () => {
            if (hidden) hiddenLines.delete(column); else hiddenLines.add(column);
            drawTimeline();
          }}, el("span", {class: "swatch", style: "background:" + color}), name));
      };
      line(6, "#222", "backing stores", "5 3");
      line(7, "#c93400", "RSS", null);
      const marker = (ns, color, label) => {
        svg.append(el("svg:line", {x1: x(ns), x2: x(ns), y1: top, y2: top + plotH, stroke: color,
          "stroke-width": 1.2, "stroke-dasharray": "3 2"}, el("svg:title", {}, label)));
        const nearRight = x(ns) > left + plotW - 140;
        svg.append(el("svg:text", {x: x(ns) + (nearRight ? -3 : 3), y: top + 10, "font-size": 10,
          fill: color, "text-anchor": nearRight ? "end" : "start"},
          label.length > 24 ? label.slice(0, 23) + "\u2026" : label));
      };
      for (const [row, name] of T.marks) {
        marker(rows[row][0], name.startsWith("memory warning") ? "#d70015" : "#555", name);
      }
      for (const [time, id, trigger] of P.leak_scans) marker(time, "#8944ab", "leak scan " + id);
      const peak = rows.find((row) => row[8]);
      if (peak) {
        svg.append(el("svg:circle", {cx: x(peak[0]), cy: y(peak[1]), r: 4, fill: "#c93400"}));
        svg.append(el("svg:text", {x: x(peak[0]) + 6, y: y(peak[1]) - 6, "font-size": 11,
          fill: "#c93400"}, "peak " + human(peak[1])));
      }
      const cursor = el("svg:line", {y1: top, y2: top + plotH, stroke: "#000",
        visibility: "hidden"});
      const band = el("svg:rect", {y: top, height: plotH, fill: "#0a64d8",
        "fill-opacity": 0.15, visibility: "hidden"});
      const overlay = el("svg:rect", {x: left, y: top, width: plotW, height: plotH,
        fill: "transparent"});
      svg.append(band, cursor, overlay);
      const timeAt = (event) => {
        const box = svg.getBoundingClientRect();
        const px = (event.clientX - box.left) * width / box.width;
        return Math.max(0, Math.min(end, (px - left) / plotW * end));
      };
      const nearest = (ns) => rows.reduce((best, row) =>
        Math.abs(row[0] - ns) < Math.abs(best[0] - ns) ? row : best, rows[0]);
      let dragStart = null;
      overlay.addEventListener("mousemove", (event) => {
        const ns = timeAt(event), row = nearest(ns);
        cursor.setAttribute("x1", x(row[0])); cursor.setAttribute("x2", x(row[0]));
        cursor.setAttribute("visibility", "visible");
        const table = el("table", {}, el("tr", {}, el("td", {}, "time"), el("td", {},
          seconds(row[0]))), el("tr", {}, el("td", {}, "live bytes"), el("td", {}, bytes(row[1]))),
          el("tr", {}, el("td", {}, "live blocks"), el("td", {}, grouped(row[2]))),
          cats.map((name, c) => el("tr", {}, el("td", {}, name), el("td", {},
            bytes(row[base + c])))),
          el("tr", {}, el("td", {}, "backing stores"), el("td", {}, bytes(row[6]))),
          el("tr", {}, el("td", {}, "RSS"), el("td", {}, bytes(row[7]))));
        showTip(event, table);
        if (dragStart !== null) {
          const a = Math.min(dragStart, ns), b = Math.max(dragStart, ns);
          band.setAttribute("x", x(a)); band.setAttribute("width", Math.max(1, x(b) - x(a)));
          band.setAttribute("visibility", "visible");
        }
      });
      overlay.addEventListener("mouseleave", () => {
        hideTip(); cursor.setAttribute("visibility", "hidden");
      });
      overlay.addEventListener("mousedown", (event) => { dragStart = timeAt(event); });
      overlay.addEventListener("mouseup", (event) => {
        if (dragStart === null) return;
        const ns = timeAt(event), moved = Math.abs(x(ns) - x(dragStart)) > 4;
        const a = bucketOf(Math.min(dragStart, ns)), b = bucketOf(Math.max(dragStart, ns));
        dragStart = null;
        if (moved) {
          band.setAttribute("x", x(a * G.bucket_ns));
          band.setAttribute("width", Math.max(1, x(bucketEnd(b)) - x(a * G.bucket_ns)));
          setScope({kind: "range", a: a, b: b});
        } else {
          band.setAttribute("x", x(bucketEnd(b)) - 1); band.setAttribute("width", 2);
          band.setAttribute("visibility", "visible");
          setScope({kind: "instant", b: b});
        }
      });
      scopeListeners.push(() => {
        if (scope.kind === "all") band.setAttribute("visibility", "hidden");
      });
      $("timeline").replaceChildren(svg);
      $("bucket-length").textContent = seconds(G.bucket_ns);
    }
    """#
}
