'use strict';
// accuracy_view.js: `inspector-cli accuracy` written into this run's folder.
// The page gets accuracy.json as report/page_data.cc kept it (or, when it is
// of another run, {"error": ...}, shown instead of another run's numbers).
// attachAccuracy gives each compiled node it judged an n.accuracy (its entry)
// and each framework node the entry of the node it was compiled into, so
// both layers colour a node by its own error: the node alone on the golden
// inputs, its worst element as a multiple of the error its tolerance allows
// (tolerance_ratio; above 1 exactly where it diverges). renderAccuracy fills
// the Accuracy panel; accuracyLines are a node's part of the details.
//
//   opscope.attachAccuracy(model, acc);   // before the views are built
//   opscope.renderAccuracy(host, model);
var opscope = window.opscope || (window.opscope = {});
(function () {
  const h = opscope.h;
  const TOP = 5;

  opscope.attachAccuracy = function (model, acc) {
    model.accuracy = acc;
    if (acc.error || !Array.isArray(acc.nodes)) return;
    const compiled = model.layers.compiled;
    const byName = new Map(compiled.nodes.filter((n) => n.name).map((n) => [n.name, n]));
    acc.matched = 0;
    for (const e of acc.nodes) {
      // The same node of the same compile: by id, checked by its op type and
      // name; else by name (accuracy compiled the model again, perhaps with a
      // pass off, and ids moved).
      let n = compiled.byId.get(e.node_id);
      if (!n || n.op_type !== e.op_type || (n.name && n.name !== e.name)) n = byName.get(e.name);
      if (!n || n.op_type !== e.op_type) continue;
      n.accuracy = e;
      e.node = n;
      ++acc.matched;
    }
    for (const f of model.layers.framework.nodes) {
      const c = opscope.compiledOf(model, f);
      if (c && c.accuracy) f.accuracy = c.accuracy;
    }
    const first = acc.nodes.find((e) => e.name === acc.first_divergent && e.node);
    acc.firstNode = first ? first.node : null;
  };

  // The bands of the scale, lowest first: [class, legend text].
  opscope.ACCURACY_LEGEND = [['acc-0', 'own error under 1% of its tolerance'],
    ['acc-1', 'own error 1% to 10% of its tolerance'], ['acc-2', 'own error 10% to 100% of its tolerance'],
    ['acc-3', 'own error over its tolerance: diverges'], ['acc-inf', 'own error not finite (Inf or NaN on one side)']];

  // A node's band by its local error, or null when it was not judged alone.
  opscope.accuracyBand = function (e) {
    const local = e && e.local;
    if (!local || !local.compared) return null;
    if (!('tolerance_ratio' in local)) return e.diverges ? 'acc-3' : 'acc-0';  // bit-exact: no scale
    const r = local.tolerance_ratio;
    if (r === null) return 'acc-inf';
    return r > 1 ? 'acc-3' : r >= 0.1 ? 'acc-2' : r >= 0.01 ? 'acc-1' : 'acc-0';
  };

  const num = (v) => (typeof v === 'number' ? Number(v.toPrecision(4)).toString() : 'not finite');
  const ratioText = (e) => (!('tolerance_ratio' in e) ? ''
    : e.tolerance_ratio === null ? ', not finite against its tolerance'
    : `, worst element at ${num(e.tolerance_ratio)}x its tolerance`);
  function errorText(e) {
    if (!e || !e.compared) return 'not compared (no golden)';
    return `${e.mismatched.toLocaleString('en-US')} / ${e.total.toLocaleString('en-US')} out of tolerance, ` +
      `max abs err ${num(e.max_abs_err)}` + (typeof e.max_abs_err === 'number' ? `, mean ${num(e.mean_abs_err)}` : '') +
      `${ratioText(e)} (${e.tensor}, ${e.compiled_dtype})`;
  }

  // The elements by decade of |golden|: how many, how many out of tolerance, the worst error.
  function histogram(e) {
    const bins = (e && e.histogram) || [];
    if (!bins.length) return null;
    const most = Math.max(...bins.map((b) => b.count));
    return h('table', {class: 'mini accuracy-histogram'},
      h('tr', {}, h('th', {}, '|golden|'), h('th', {class: 'num'}, 'elements'), h('th', {class: 'num'}, 'out of tol.'),
        h('th', {class: 'num'}, 'max abs err'), h('th', {class: 'share'}, '')),
      bins.map((b) => h('tr', {class: b.mismatched ? 'failed' : ''}, h('td', {}, b.abs_golden),
        h('td', {class: 'num'}, b.count.toLocaleString('en-US')), h('td', {class: 'num'}, b.mismatched.toLocaleString('en-US')),
        h('td', {class: 'num'}, num(b.max_abs_err)),
        h('td', {class: 'share'}, h('span', {class: 'bar' + (b.mismatched ? ' bad' : ''),
          style: `width:${Math.max(1, (100 * b.count) / most).toFixed(1)}%`})))));
  }

  // A node's part of the details: its three errors against the golden, the
  // rule, the compiler's decisions, the replay, the histogram of its own error.
  opscope.accuracyLines = function (model, n) {
    const e = n.accuracy;
    if (!e) return [];
    const band = opscope.accuracyBand(e);
    const via = n.layer === 'framework' && e.node ? h('span', {}, ' (of its compiled node ',
      h('a', {class: 'link', href: '#', 'data-link': 'node', 'data-layer': 'compiled', 'data-node-id': e.node.node_id}, e.name), ')') : null;
    const verdict = e.diverges ? 'diverges: its own error crosses the tolerance' : 'within tolerance on its own';
    const rows = [['local', errorText(e.local)], ['inherited', errorText(e.inherited)], ['output', errorText(e.output)],
      // A fused kernel judged at its inner stages too, each cut there and run alone.
      ...(e.stages || []).map((st) => ['stage', (st.diverges ? 'DIVERGES ' : '') + `after ${st.framework_node}: ${errorText(st.local)}`]),
      ['mapping', e.mapping + ((e.framework_nodes || []).length > 1 ? ': ' + e.framework_nodes.join(', ') : '')],
      e.tolerance && ['tolerance', e.tolerance], ...(e.decisions || []).map((d) => ['decision', d]),
      e.replay && ['replay', h('code', {class: 'replay'}, e.replay)]].filter(Boolean);
    const first = model.accuracy.firstNode && e.node === model.accuracy.firstNode;
    return [h('h4', {}, 'accuracy against the double-precision golden'),
      h('p', {class: 'status accuracy ' + (band || '')}, (first ? 'the first divergent node: ' : '') + verdict, via),
      h('dl', {class: 'facts accuracy-facts'}, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      histogram(e.local && e.local.compared ? e.local : e.output)];
  };

  // The Accuracy panel: the verdict, the first divergent node and the link
  // that lights the path to it, then the nodes by their own error.
  opscope.renderAccuracy = function (host, model) {
    const acc = model.accuracy;
    if (acc.error) {
      host.replaceChildren(h('p', {class: 'error'}, acc.error));
      return 'not shown';
    }
    const nodes = acc.nodes || [], diverging = nodes.filter((e) => e.diverges).length;
    const link = (e) => (e.node ? h('a', {class: 'link', href: '#', 'data-link': 'node', 'data-layer': 'compiled',
      'data-node-id': e.node.node_id}, e.name) : h('span', {}, e.name));
    const parts = [];
    if (acc.firstNode) {
      parts.push(h('p', {class: 'status bad'}, `${diverging} compiled node(s) diverge; the first along the data flow is `,
        link(nodes.find((e) => e.node === acc.firstNode))),
      h('p', {class: 'paths'}, h('a', {class: 'link', href: '#', 'data-link': 'accuracy-path', id: 'accuracy-path'},
        'highlight the path from the inputs to it'), h('span', {class: 'muted'}, ' (both graphs and the timeline)')));
    } else {
      parts.push(h('p', {class: 'status ' + (nodes.length ? 'ok' : 'off')}, nodes.length
        ? 'no compiled node diverges: each one alone is within tolerance of the golden' : 'nothing compared'));
    }
    if (acc.matched < nodes.length) {
      parts.push(h('p', {class: 'muted'}, `${nodes.length - acc.matched} judged node(s) not in this run's compiled graph` +
        ((acc.disabled_passes || []).length ? ` (accuracy compiled without ${acc.disabled_passes.join(', ')})` : '')));
    }
    parts.push(h('table', {class: 'mini accuracy-top', id: 'accuracy-top'},
      h('tr', {}, h('th', {}, 'node'), h('th', {class: 'num'}, 'own error / tol.'), h('th', {class: 'num'}, 'out of tol.'),
        h('th', {}, 'decision')),
      nodes.slice(0, TOP).map((e) => h('tr', {class: e.diverges ? 'failed' : '', 'data-node': e.name},
        h('td', {}, h('span', {class: 'acc-dot ' + (opscope.accuracyBand(e) || '')}), link(e)),
        h('td', {class: 'num'}, !e.local || !e.local.compared ? '–' : 'tolerance_ratio' in e.local ? num(e.local.tolerance_ratio) : '–'),
        h('td', {class: 'num'}, e.local && e.local.compared ? `${e.local.mismatched} / ${e.local.total}` : '–'),
        h('td', {}, (e.decisions || [])[0] || '–')))));
    host.replaceChildren(...parts);
    return acc.firstNode ? `${diverging} diverging` : 'clean';
  };
})();
