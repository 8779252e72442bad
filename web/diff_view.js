'use strict';
// diff_view.js: this run against a baseline (`inspector-cli export --format
// html --baseline BASE_DIR`). The page gets diff.json as the library judged
// it (graph/run/run_diff.h, slimmed by report/page_data.cc): no verdict is
// re-judged here. attachDiff gives each node the diff names an n.diff (its
// badge in the graph views, its lines in the details, its colour in the
// timeline's "vs baseline" mode); renderDiff fills the Baseline panel.
//
//   opscope.attachDiff(model, diff);           // before the views are built
//   opscope.renderDiff(host, model, {onNode: (node) => ...});
var opscope = window.opscope || (window.opscope = {});
(function () {
  const h = opscope.h;
  const ROWS = 12;  // rows per table and names per list before "… N more"

  opscope.attachDiff = function (model, diff) {
    model.diff = diff;
    const byName = {};
    for (const layer of ['framework', 'compiled']) {
      byName[layer] = new Map(model.layers[layer].nodes.filter((n) => n.name).map((n) => [n.name, n]));
    }
    const entry = (layer, name) => {
      const n = byName[layer].get(name);
      return n ? n.diff || (n.diff = {}) : null;
    };
    // Another engine's compiled nodes are all "added" by name: no badge says so (the engines table lines them up).
    for (const layer of diff.engines ? ['framework'] : ['framework', 'compiled']) {
      for (const name of (diff.nodes && diff.nodes[layer] && diff.nodes[layer].added) || []) {
        const d = entry(layer, name);
        if (d) d.added = true;
      }
    }
    for (const e of diff.node_times || []) {
      const d = entry('compiled', e.node);
      if (d) d.time = e;
    }
    for (const kind of ['added', 'changed']) {
      for (const f of (diff.fusions && diff.fusions[kind]) || []) {
        const d = entry('compiled', f.node);
        if (d) d.fusion = Object.assign({kind}, f);
      }
    }
  };

  const pctText = (p) => (typeof p === 'number' ? (p > 0 ? '+' : p < 0 ? '−' : '') + Math.abs(p).toFixed(1) + '%' : '');

  // The one mark a node gets in the graph: what changed most about it.
  opscope.diffBadge = function (d) {
    if (!d) return null;
    const v = d.time && d.time.verdict;
    if (d.added) return {cls: 'chg-added', text: '+ added'};
    if (v === 'slower') return {cls: 'chg-slower', text: '▲ ' + pctText(d.time.change_pct)};
    if (v === 'faster') return {cls: 'chg-faster', text: '▼ ' + pctText(d.time.change_pct)};
    if (v === 'new') return {cls: 'chg-new', text: 'new time'};
    if (d.fusion) return {cls: 'chg-fusion', text: 'fusion ' + d.fusion.kind};
    return null;
  };

  // The legend rows of the badges, for a graph that has any.
  opscope.DIFF_LEGEND = [['chg-added', 'not in the baseline run'], ['chg-slower', 'slower than the baseline, beyond the noise'],
    ['chg-faster', 'faster than the baseline, beyond the noise'], ['chg-new', 'ran here, not in the baseline'],
    ['chg-fusion', 'fusion added or changed since the baseline']];

  // The timeline's "vs baseline" colouring: a task by its node's verdict.
  opscope.diffKeyOfTask = function (model, t) {
    const n = opscope.nodeOfTask(model, t);
    if (!n) return opscope.opTypeRowOf(t) === opscope.DATA_MOVEMENT ? opscope.DATA_MOVEMENT : '(no node)';
    const d = n.diff;
    if (d && d.added) return 'added node';
    const v = d && d.time ? d.time.verdict : 'unchanged';
    return v === 'unchanged' ? 'unchanged' : v;
  };

  // What the details panel says of one node against the baseline.
  opscope.diffLines = function (model, n) {
    if (!model.diff) return [];
    const d = n.diff || {}, lines = [];
    if (d.added) lines.push(h('p', {class: 'status chg-added'}, 'not in the baseline run: added'));
    if (d.time) {
      const t = d.time;
      lines.push(h('p', {class: 'status diff-time chg-' + t.verdict.replace(' ', '-')},
        `vs baseline: ${opscope.formatUs(t.base_us)} → ${opscope.formatUs(t.new_us)}` +
        (typeof t.change_pct === 'number' ? ` (${pctText(t.change_pct)}, ${t.verdict})` : ` (${t.verdict})`)));
    } else if (n.layer === 'compiled' && !d.added) {
      lines.push(h('p', {class: 'status diff-time muted'}, 'vs baseline: no change beyond the threshold and the noise'));
    }
    if (d.fusion) {
      lines.push(h('p', {class: 'status chg-fusion'}, d.fusion.kind === 'added' ? `fusion added: ${d.fusion.fusion}`
        : `fusion changed: ${d.fusion.base} → ${d.fusion.new}`));
    }
    return lines;
  };

  function more(list, shown) {
    return list.length > shown ? h('div', {class: 'muted'}, `… ${list.length - shown} more (diff.json: inspector-cli diff --output)`) : null;
  }

  function verdictCell(e) {
    return h('td', {class: 'verdict chg-' + String(e.verdict).replace(' ', '-')},
      (typeof e.change_pct === 'number' ? pctText(e.change_pct) + ' ' : '') + e.verdict);
  }

  // Rows that changed first, by how much time they moved.
  const byMove = (rows) => [...rows].sort((a, b) => Math.abs(b.change_us || 0) - Math.abs(a.change_us || 0));
  const median = (side) => (side && typeof side === 'object' ? side.median_us : side);

  // Two engines (opscope's run and one imported from onnxruntime): what each
  // made of the framework nodes it fused, the layouts each changed, and time
  // by framework op type, as graph/run/engine_diff.h lays them out.
  function engineParts(e, link) {
    // One cell per engine, so that the table fits the panel: the op type, then its size and time.
    const side = (s) => (s ? h('td', {}, s.op_type, h('div', {class: 'muted'}, `${s.framework.length} node${s.framework.length === 1 ? '' : 's'}` +
      (s.time_us === null ? '' : ' · ' + opscope.formatUs(s.time_us))))
      : h('td', {class: 'muted'}, 'not run'));
    const layouts = (l) => {
      const conv = l.conversions.map((c) => `${c.op_type} ${c.from} → ${c.to}` +
        (c.time_us === null ? '' : ' ' + opscope.formatUs(c.time_us)));
      const other = l.other_layout_nodes ? [`${l.other_layout_nodes} node(s) in ${l.other_layout}`] : [];
      return [`${l.conversions.length} conversion(s)`, ...conv, ...other].join('; ');
    };
    const types = byMove((e.framework_op_types || []).filter((x) => x.verdict !== 'unchanged'));
    return [
      h('h4', {class: 'engines'}, `engines: baseline ${e.base}, this run ${e.new}`),
      h('p', {class: 'muted'}, 'their compiled graphs compared through the framework graph both read'),
      h('table', {class: 'mini diff-engines'}, h('tr', {}, h('th', {}, 'framework nodes'), h('th', {}, 'baseline'),
        h('th', {}, 'this run')),
      e.fusions.slice(0, ROWS).map((r) => h('tr', {'data-at': r.at}, h('td', {}, link('framework', r.at),
        r.framework.length > 1 ? h('span', {class: 'muted'}, ` +${r.framework.length - 1}`) : null),
      side(r.base), side(r.new)))),
      more(e.fusions, ROWS),
      h('p', {class: 'layouts-base'}, 'layouts, baseline: ' + layouts(e.layouts.base)),
      h('p', {class: 'layouts-new'}, 'layouts, this run: ' + layouts(e.layouts.new)),
      h('h4', {}, `time by framework op type (${types.length} changed of ${(e.framework_op_types || []).length})`),
      types.length ? h('table', {class: 'mini diff-fwtypes'}, h('tr', {}, h('th', {}, 'op type'), h('th', {class: 'num'}, 'baseline'),
        h('th', {class: 'num'}, 'this run'), h('th', {}, 'change')),
      types.slice(0, ROWS).map((x) => h('tr', {}, h('td', {}, x.op_type), h('td', {class: 'num'}, opscope.formatUs(median(x.base))),
        h('td', {class: 'num'}, opscope.formatUs(median(x.new))), verdictCell(x)))) : null,
    ];
  }

  opscope.renderDiff = function (host, model, {onNode}) {
    const d = model.diff, byName = new Map(model.layers.compiled.nodes.map((n) => [n.name, n]));
    const frameworkByName = new Map(model.layers.framework.nodes.map((n) => [n.name, n]));
    const link = (layer, name) => {
      const n = (layer === 'framework' ? frameworkByName : byName).get(name);
      if (!n) return h('span', {}, name);
      const a = h('a', {class: 'link', href: '#', 'data-diff-node': name, 'data-layer': layer}, name);
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        onNode(n);
      });
      return a;
    };
    const parts = [];
    parts.push(h('p', {class: 'muted base-dir'}, 'baseline ', h('code', {}, d.base)));
    parts.push(h('p', {class: 'status ' + (d.passed ? 'ok' : 'bad'), id: 'diff-verdict'},
      d.passed ? 'passed: no regression beyond the thresholds and the noise' : 'FAILED: ' + d.regressions.join('; ')));
    if (d.models && !d.models.same) parts.push(h('p', {class: 'status bad'}, 'the two runs are of different models'));
    // What the compilers did differently: what the diff below is of (not a setting that spoils it).
    if (d.compiler) parts.push(h('p', {class: 'diff-compiler'}, 'compiler: ' + d.compiler.summary));
    const settings = d.changed_settings || [];
    if (settings.length) {
      parts.push(h('h4', {}, 'settings changed (the times are not comparable)'), h('table', {class: 'mini diff-settings'},
        settings.map((s) => h('tr', {}, h('td', {}, s.setting), h('td', {}, String(s.base)), h('td', {}, '→'), h('td', {}, String(s.new))))));
    }
    const timeRow = (what, e) => h('tr', {}, h('td', {}, what), h('td', {class: 'num'}, opscope.formatUs(median(e.base))),
      h('td', {class: 'num'}, opscope.formatUs(median(e.new))), verdictCell(e));
    parts.push(h('table', {class: 'mini diff-times'}, h('tr', {}, h('th', {}, ''), h('th', {class: 'num'}, 'baseline'),
      h('th', {class: 'num'}, 'this run'), h('th', {}, 'change')), timeRow('span', d.span), timeRow('total task time', d.total_task)));
    parts.push(h('p', {class: 'muted'}, `noise: ${d.noise.base_iterations} → ${d.noise.new_iterations} timed iterations; ${d.noise.rule}`));
    if (d.noise.load_unknown) parts.push(h('p', {class: 'muted'}, `noise: ${d.noise.load_unknown}`));

    if (d.engines) parts.push(...engineParts(d.engines, link));
    for (const layer of ['framework', 'compiled']) {
      const c = d.nodes[layer];
      // Another engine's compiled nodes share no names with ours: the engines section lines them up.
      if (d.engines && layer === 'compiled') {
        parts.push(h('h4', {}, `compiled nodes ${c.base} → ${c.new} (two engines: compared through the framework graph above)`));
        continue;
      }
      parts.push(h('h4', {}, `${layer} nodes ${c.base} → ${c.new}`));
      for (const kind of ['added', 'removed']) {
        const names = c[kind] || [];
        if (!names.length) continue;
        parts.push(h('div', {class: 'links diff-' + kind, 'data-layer': layer}, h('span', {class: 'muted'}, kind + ': '),
          names.slice(0, ROWS).map((n) => (kind === 'added' ? link(layer, n) : h('span', {class: 'removed'}, n)))),
        more(names, ROWS));
      }
    }
    const fusions = d.engines ? [] : ['added', 'removed', 'changed'].flatMap((k) => (d.fusions[k] || []).map((f) => Object.assign({kind: k}, f)));
    if (fusions.length) {
      parts.push(h('h4', {}, `fusions (${fusions.length} changed)`), h('table', {class: 'mini diff-fusions'},
        fusions.slice(0, ROWS).map((f) => h('tr', {}, h('td', {}, f.kind), h('td', {}, f.kind === 'removed' ? f.node : link('compiled', f.node)),
          h('td', {class: 'muted'}, f.kind === 'changed' ? `${f.base} → ${f.new}` : f.fusion)))), more(fusions, ROWS));
    }
    const types = byMove((d.op_types || []).filter((e) => e.verdict !== 'unchanged'));
    parts.push(h('h4', {}, `op types (${types.length} changed of ${(d.op_types || []).length})`));
    if (types.length) {
      parts.push(h('table', {class: 'mini diff-optypes'}, h('tr', {}, h('th', {}, 'op type'), h('th', {class: 'num'}, 'baseline'),
        h('th', {class: 'num'}, 'this run'), h('th', {}, 'change')),
      types.slice(0, ROWS).map((e) => h('tr', {}, h('td', {}, e.op_type), h('td', {class: 'num'}, opscope.formatUs(median(e.base))),
        h('td', {class: 'num'}, opscope.formatUs(median(e.new))), verdictCell(e)))), more(types, ROWS));
    }
    const nodes = byMove(d.node_times || []);
    parts.push(h('h4', {}, `compiled node times (${nodes.length} changed, ${d.node_times_within_noise || 0} within noise, ` +
      `${d.node_times_unchanged || 0} unchanged)`));
    if (nodes.length) {
      parts.push(h('table', {class: 'mini diff-nodes'}, h('tr', {}, h('th', {}, 'node'), h('th', {class: 'num'}, 'baseline'),
        h('th', {class: 'num'}, 'this run'), h('th', {}, 'change')),
      nodes.slice(0, ROWS).map((e) => h('tr', {'data-node': e.node}, h('td', {}, link('compiled', e.node)),
        h('td', {class: 'num'}, opscope.formatUs(e.base_us)), h('td', {class: 'num'}, opscope.formatUs(e.new_us)), verdictCell(e)))),
      more(nodes, ROWS));
    }
    host.replaceChildren(...parts.filter(Boolean));
  };

  // The header's words for it: "vs baseline: span +3.2% (within noise)".
  opscope.diffHeadline = function (d) {
    const s = d.span;
    return `vs baseline: span ${pctText(s.change_pct) || '±0%'} (${s.verdict})` + (d.passed ? '' : ' · REGRESSION');
  };
})();
