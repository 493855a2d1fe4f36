/// The page's style sheet and the skeleton of its body, which the scripts fill in.
enum HTMLPageStyle {
  static let css = #"""
    :root { --fg: #1d1d1f; --muted: #6e6e73; --line: #d2d2d7; --bg: #ffffff; --panel: #f5f5f7;
      --accent: #0a64d8; --warn: #d70015; --scan: #8944ab; --peak: #c93400; }
    * { box-sizing: border-box; }
    body { margin: 0; padding: 16px 24px 48px; font: 13px/1.45 -apple-system, "Segoe UI",
      Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
    h1 { font-size: 20px; margin: 0 0 2px; }
    h2 { font-size: 15px; margin: 0 0 8px; }
    section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
      padding: 12px 14px; margin: 12px 0; }
    .muted, .hint { color: var(--muted); }
    .hint { font-size: 12px; margin: 4px 0 0; }
    .cards { display: flex; flex-wrap: wrap; gap: 10px; background: none; border: 0; padding: 0; }
    .card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
      padding: 8px 12px; min-width: 170px; }
    .card .label { color: var(--muted); font-size: 12px; }
    .card .value { font-size: 17px; font-weight: 600; font-variant-numeric: tabular-nums; }
    .card .sub { color: var(--muted); font-size: 12px; }
    table { border-collapse: collapse; width: 100%; background: var(--bg); }
    th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right;
      white-space: nowrap; font-variant-numeric: tabular-nums; }
    th:first-child, td:first-child { text-align: left; white-space: normal;
      overflow-wrap: anywhere; }
    th { cursor: pointer; user-select: none; background: #ebebef; position: sticky; top: 0; }
    th.sorted::after { content: " \25BE"; }
    th.sorted.ascending::after { content: " \25B4"; }
    .scroll { max-height: 420px; overflow: auto; border: 1px solid var(--line); }
    input[type=search], select, button { font: inherit; padding: 3px 6px; margin: 0 8px 8px 0; }
    #scope-bar { position: sticky; top: 0; z-index: 2; background: #fffbe6; border: 1px solid
      #e8d48a; border-radius: 6px; padding: 6px 10px; margin: 8px 0; }
    #timeline svg { display: block; width: 100%; background: var(--bg); cursor: crosshair; }
    .legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; font-size: 12px; }
    .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px;
      border-radius: 2px; vertical-align: -1px; }
    .tip { position: fixed; pointer-events: none; background: rgba(29,29,31,.92); color: #fff;
      padding: 6px 8px; border-radius: 6px; font-size: 12px; display: none; z-index: 5;
      max-width: 420px; }
    .tip table { background: none; width: auto; }
    .tip td { border: 0; padding: 0 4px; color: #fff; }
    .tree-row { display: flex; gap: 8px; padding: 1px 0; white-space: nowrap; cursor: default; }
    .tree-row:hover { background: #e8eefc; }
    .tree-row .num { width: 190px; text-align: right; flex: none;
      font-variant-numeric: tabular-nums; }
    .tree-row .pct { width: 56px; text-align: right; flex: none; color: var(--muted); }
    .tree-row .toggle { width: 14px; flex: none; cursor: pointer; color: var(--muted); }
    .tree-row .module { color: var(--muted); }
    #tree-body { max-height: 520px; overflow: auto; background: var(--bg);
      border: 1px solid var(--line); padding: 4px; font-family: ui-monospace, Menlo, monospace;
      font-size: 12px; }
    #flame svg { display: block; width: 100%; font-family: ui-monospace, Menlo, monospace;
      font-size: 11px; }
    #flame rect { stroke: #fff; stroke-width: .5; cursor: pointer; }
    .chain { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 6px 0; }
    .chain .node { background: #fff; border: 1.5px solid var(--warn); border-radius: 14px;
      padding: 2px 10px; font-weight: 600; }
    .chain .arrow { color: var(--warn); font-size: 16px; }
    .leak { background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
      padding: 8px 10px; margin: 8px 0; }
    .kind { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; padding: 1px 6px;
      border-radius: 4px; background: #fde7e9; color: var(--warn); margin-right: 6px; }
    pre, .frames { font-family: ui-monospace, Menlo, monospace; font-size: 12px;
      white-space: pre-wrap; margin: 4px 0; }
    .bar { display: flex; height: 18px; border-radius: 4px; overflow: hidden; margin: 6px 0;
      border: 1px solid var(--line); }
    .bar span { display: block; height: 100%; }
    """#

  static let body = #"""
    <header><h1>Heapline</h1><div id="trace-info" class="muted"></div></header>
    <section id="summary" class="cards"></section>
    <section id="timeline-panel"><h2>Timeline</h2>
    <div id="timeline-legend" class="legend"></div><div id="timeline"></div>
    <p class="hint">Hover for the values at an instant. Click an instant for the state there
    (as <code>report --at</code>); drag across a range for what was allocated in it and is
    still live at its end (as generations). Instants and ranges snap to steps of
    <span id="bucket-length"></span>.</p></section>
    <div id="scope-bar"></div>
    <section id="categories-panel"><h2>Categories</h2>
    <input type="search" id="category-search" placeholder="Search categories">
    <div class="scroll"><table id="categories"></table></div></section>
    <section id="tree-panel"><h2>Call tree and flame graph</h2>
    <select id="tree-view"><option value="top-down">Top-down call tree</option>
    <option value="bottom-up">Bottom-up call tree</option>
    <option value="flame">Flame graph</option></select>
    <select id="tree-weight"><option value="0">Bytes at the peak</option>
    <option value="1">Allocated bytes</option><option value="2">Allocations</option>
    <option value="3">Temporary allocations</option><option value="4">Leaked bytes</option>
    </select>
    <input type="search" id="tree-filter" placeholder="Filter by function or module">
    <div id="tree-note" class="hint"></div><div id="tree-body"></div><div id="flame"></div>
    </section>
    <section id="leaks-panel"><h2>Leaks</h2><div id="leaks"></div></section>
    <section id="footprint-panel"><h2>Footprint and memory warnings</h2>
    <div id="footprint"></div></section>
    <div id="tip" class="tip"></div>
    """#
}
