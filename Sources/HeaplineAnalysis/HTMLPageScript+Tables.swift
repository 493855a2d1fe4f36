extension HTMLPageScript {
  /// The summary cards, the categories table, the leaks and the footprint.
  static let tables = #"""
    function card(label, id, value, sub) {
      return el("div", {class: "card"}, el("div", {class: "label"}, label),
        el("div", {class: "value", id: id}, value), el("div", {class: "sub"}, sub || ""));
    }
    function drawSummary() {
      const t = R.totals, trace = R.trace;
      $("trace-info").textContent = trace.path + " \u2014 pid " + trace.pid + ", "
        + seconds(trace.duration_ns) + (trace.is_complete ? "" : ", incomplete trace")
        + (trace.end_reason ? ", ended: " + trace.end_reason : "");
      const top = P.stacks.length > 1 ? P.stacks[0] : null;
      const topFrame = top && top.frames.length ? P.frames[top.frames[0]] : null;
      const cards = [
        card("Peak live bytes", "peak-live-bytes", bytes(t.peak_live_bytes),
          grouped(t.peak_live_blocks) + " blocks at " + seconds(t.peak_time_ns)),
        card("Live at end", "live-at-end", bytes(t.live_bytes), grouped(t.live_blocks) + " blocks"),
        card("Allocations", "allocations", grouped(t.allocations),
          bytes(t.allocated_bytes) + " allocated, " + grouped(t.frees) + " frees"),
        card("Top function at the peak", "top-function", topFrame ? topFrame[0] : "\u2013",
          top ? el("span", {id: "top-function-bytes"}, bytes(top.weights[0])) : ""),
      ];
      if (t.peak_rss_bytes !== null) {
        cards.push(card("Peak RSS", "peak-rss", bytes(t.peak_rss_bytes),
          "last " + bytes(t.last_rss_bytes)));
      }
      if (R.backing_stores.total_count > 0) {
        cards.push(card("Backing stores at their peak", "backing-peak",
          bytes(R.backing_stores.peak_bytes), "live at end " + bytes(R.backing_stores.live_bytes)));
      }
      if (P.leaks) {
        const lost = P.leaks.definitely_lost[1] + P.leaks.indirectly_lost[1];
        cards.push(card("Leaked", "leaked-bytes", bytes(lost),
          grouped(P.leaks.definitely_lost[0] + P.leaks.indirectly_lost[0]) + " blocks lost"));
      }
      $("summary").replaceChildren(...cards);
    }

    const categoryState = {column: null, ascending: false};
    function categoryRows() {
      if (scope.kind === "all") {
        return {columns: ["Category", "Persistent Bytes", "# Persistent", "# Transient",
          "Total Bytes", "# Total", "Bytes at Peak"],
          kinds: ["text", "bytes", "count", "count", "bytes", "count", "bytes"],
          rows: R.categories.map((c) => [c.name, c.persistent_bytes, c.persistent_count,
            c.transient_count, c.total_bytes, c.total_count, c.bytes_at_peak])};
      }
      const byCategory = G.categories.map((name) => [name, 0, 0, 0, 0]);
      siteFigures(scope).forEach((site, s) => {
        const row = byCategory[G.sites[s][1]];
        row[1] += site.live; row[2] += site.liveCount; row[3] += site.total;
        row[4] += site.totalCount;
      });
      if (scope.kind === "instant") {
        return {columns: ["Category", "Persistent Bytes", "# Persistent", "# Transient",
          "Total Bytes", "# Total"],
          kinds: ["text", "bytes", "count", "count", "bytes", "count"],
          rows: byCategory.filter((r) => r[4] > 0).map((r) => [r[0], r[1], r[2], r[4] - r[2],
            r[3], r[4]])};
      }
      return {columns: ["Category", "Bytes allocated in the range, live at its end", "# Blocks"],
        kinds: ["text", "bytes", "count"],
        rows: byCategory.filter((r) => r[2] > 0).map((r) => [r[0], r[1], r[2]])};
    }
    function drawCategories() {
      const table = categoryRows();
      const query = $("category-search").value.toLowerCase();
      let rows = table.rows.filter((row) => row[0].toLowerCase().includes(query));
      const column = categoryState.column !== null && categoryState.column < table.columns.length
        ? categoryState.column : (scope.kind === "all" ? null : 1);
      if (column !== null) {
        const sign = categoryState.ascending ? 1 : -1;
        rows = rows.slice().sort((a, b) => a[column] < b[column] ? -sign
          : a[column] > b[column] ? sign : 0);
      }
      const head = el("tr", {}, table.columns.map((name, c) => el("th", {
        class: c === column ? "sorted" + (categoryState.ascending ? " ascending" : "") : null,
        onclick: () => {
          categoryState.ascending = categoryState.column === c ? !categoryState.ascending : c === 0;
          categoryState.column = c;
          drawCategories();
        }}, name)));
      const body = rows.map((row) => el("tr", {}, row.map((value, c) => el("td", {},
        table.kinds[c] === "text" ? value : grouped(value)))));
      $("categories").replaceChildren(el("thead", {}, head), el("tbody", {}, body));
    }

    function amountText(amount) { return bytes(amount[1]) + " in " + grouped(amount[0])
      + (amount[0] === 1 ? " block" : " blocks"); }
    function drawLeaks() {
      const L = P.leaks, box = $("leaks");
      if (!L) {
        box.replaceChildren(el("p", {class: "muted"}, P.leak_scan_failure
          ? "This trace holds no leak scan: it could not run (" + P.leak_scan_failure + ")."
          : "This trace holds no leak scan (record "
            + "with --leaks at exit, the default, --leaks-every or --leaks-signal)."));
        return;
      }
      const parts = [el("p", {}, "Scan " + L.scan_id + " (" + L.scan_trigger + ", at "
        + seconds(L.scan_time_ns) + (L.scan_complete ? "" : ", incomplete") + "): ",
        el("b", {id: "definitely-lost"}, amountText(L.definitely_lost)), " definitely lost, ",
        amountText(L.indirectly_lost), " indirectly lost, ", amountText(L.possibly_lost),
        " possibly lost.")];
      for (const s of L.suppressed_by_default) {
        parts.push(el("p", {class: "muted"}, "Suppressed by default: " + s.name + ", "
          + amountText(s.amount) + " (" + s.summary + ")."));
      }
      if (L.group_count === 0) parts.push(el("p", {}, "No leaks."));
      for (const group of L.groups) {
        const kind = {root: "root leak", cycle: "cycle", possible: "possibly lost"}[group.kind];
        const node = el("div", {class: "leak"}, el("div", {}, el("span", {class: "kind"}, kind),
          el("b", {}, group.name), group.instances > 1 ? " \u00d7 " + group.instances : "",
          " \u2014 ", amountText(group.definitely_lost), " definitely, ",
          amountText(group.indirectly_lost), " indirectly, ", amountText(group.possibly_lost),
          " possibly lost"));
        if (group.kind === "cycle") {
          // The cycle's path, as its name gives it: its members in order would draw pointers
          // that are not there (A, its array, and the two Bs that point back: "B \u2192 B").
          const chain = el("div", {class: "chain"});
          group.name.split(" \u2192 ").forEach((name, k) => {
            if (k) chain.append(el("span", {class: "arrow"}, "\u2192"));
            chain.append(el("span", {class: "node"}, name));
          });
          node.append(chain);
        }
        for (const member of group.members) {
          node.append(el("details", {}, el("summary", {}, member.category + ", "
            + bytes(member.size) + ": allocation stack"), framesBlock(member.frames)));
        }
        parts.push(node);
      }
      if (L.group_count > L.groups.length) {
        parts.push(el("p", {class: "muted"}, "\u2026 and " + grouped(L.group_count
          - L.groups.length) + " more groups (heapline leaks lists them all)."));
      }
      box.replaceChildren(...parts);
    }

    function footprintBlock(title, f) {
      const parts = [["malloc live", f.malloc_live_bytes, "#0a64d8"],
        ["malloc overhead", f.malloc_overhead_bytes, "#7aa7e8"],
        ["backing stores", f.backing_store_bytes, "#f5a623"],
        ["unaccounted", f.unaccounted_bytes, "#c7c7cc"]];
      const total = f.resident_bytes || parts.reduce((s, p) => s + Math.max(0, p[2] && p[1] || 0), 0);
      const bar = el("div", {class: "bar"}, parts.filter((p) => p[1] > 0 && total > 0).map((p) =>
        el("span", {style: "background:" + p[2] + ";width:" + (p[1] / total * 100) + "%",
          title: p[0] + ": " + bytes(p[1])})));
      return el("div", {}, el("h3", {style: "font-size:13px;margin:10px 0 2px"}, title + " ("
        + seconds(f.time_ns) + (f.measured ? "" : ", not measured") + ")"), bar,
        el("table", {}, el("tr", {}, el("td", {}, "RSS"), el("td", {}, bytes(f.resident_bytes))),
          parts.map((p) => el("tr", {}, el("td", {}, el("span", {class: "swatch",
            style: "background:" + p[2]}), p[0]), el("td", {}, bytes(p[1])))),
          el("tr", {}, el("td", {}, "free in the allocator"),
            el("td", {}, bytes(f.allocator_free_bytes)))));
    }
    function drawFootprint() {
      const parts = [footprintBlock("At the end", R.footprint)];
      if (R.footprint_at_peak_rss) parts.push(footprintBlock("At the largest RSS sample",
        R.footprint_at_peak_rss));
      const stores = R.backing_stores;
      if (stores.categories.length) {
        parts.push(el("h3", {style: "font-size:13px;margin:12px 0 4px"}, "Backing stores"),
          el("table", {}, el("tr", {}, ["Category", "Live Bytes", "# Live", "Total Bytes",
            "# Total", "Peak Bytes"].map((h) => el("th", {}, h))),
          stores.categories.map((c) => el("tr", {}, el("td", {}, c.name),
            el("td", {}, grouped(c.persistent_bytes)), el("td", {}, grouped(c.persistent_count)),
            el("td", {}, grouped(c.total_bytes)), el("td", {}, grouped(c.total_count)),
            el("td", {}, grouped(c.peak_bytes))))));
      }
      parts.push(el("h3", {style: "font-size:13px;margin:12px 0 4px"}, "Memory warnings"));
      if (!R.memory_warnings.length) parts.push(el("p", {class: "muted"}, "No memory warnings."));
      else parts.push(el("table", {id: "warnings"}, el("tr", {}, ["Time", "Level", "Source",
        "Footprint", "Limit", "Freed", "Observers"].map((h) => el("th", {}, h))),
        R.memory_warnings.map((w) => el("tr", {}, el("td", {}, seconds(w.time_ns)),
          el("td", {}, w.level), el("td", {}, w.source), el("td", {}, bytes(w.footprint_bytes)),
          el("td", {}, bytes(w.limit_bytes)), el("td", {}, bytes(w.freed_bytes)),
          el("td", {}, w.responses.map((r) => r.observer + ": " + bytes(r.freed_bytes))
            .join("; ") || "none")))));
      if (R.memory_limit_kill) {
        parts.push(el("p", {}, el("b", {}, "Killed at " + seconds(R.memory_limit_kill.time_ns)
          + " for crossing its memory limit"), " (footprint "
          + bytes(R.memory_limit_kill.footprint_bytes) + ", limit "
          + bytes(R.memory_limit_kill.limit_bytes) + ")."));
      }
      if (P.low_memory_report) parts.push(el("details", {open: ""}, el("summary", {},
        "Low-memory report"), el("pre", {}, P.low_memory_report)));
      $("footprint").replaceChildren(...parts);
    }
    """#
}
