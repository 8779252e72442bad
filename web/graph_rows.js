'use strict';
// graph_rows.js: graph.json version 3 holds each layer's nodes, values,
// layout scopes and routes as columns (src/graph/export/graph_json.h lists
// them). opscope.graphRows turns them back into version 2's lists of
// objects, in place, as graph/export/graph_json_rows.cc does for the
// library's readers; model.js then completes the nodes. A file from
// elsewhere may hold anything: a column missing, short or of the wrong type
// leaves that member out. Also loaded by the web tests under node.
(function (root) {
  const opscope = root.opscope || (root.opscope = {});
  const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);
  const column = (columns, key) => (isObject(columns) && Array.isArray(columns[key]) ? columns[key] : []);
  const isInt = (x) => Number.isInteger(x);
  const entry = (table, index) => (isInt(index) && index >= 0 && index < table.length ? table[index] : undefined);

  function valueRows(columns, tables) {
    const name = column(columns, 'name'), dtype = column(columns, 'dtype'), shape = column(columns, 'shape'),
      bytes = column(columns, 'bytes'), flags = column(columns, 'flags'), offset = column(columns, 'mem_offset');
    const dtypes = column(tables, 'dtypes');
    return name.map((n, i) => {
      const v = {name: n, dtype: typeof entry(dtypes, dtype[i]) === 'string' ? dtypes[dtype[i]] : null,
        shape: Array.isArray(shape[i]) ? shape[i] : null};
      if (isInt(bytes[i]) && bytes[i] >= 0) v.bytes = bytes[i];
      const f = isInt(flags[i]) ? flags[i] : 0;
      if (f & 1) v.constant = true;
      if (f & 2) v.graph_input = true;
      if (f & 4) v.graph_output = true;
      if (isInt(offset[i]) && offset[i] >= 0) v.mem_offset = offset[i];
      return v;
    });
  }

  function nodeRows(columns, extra, tables, values) {
    const c = (key) => column(columns, key), t = (key) => column(tables, key);
    const steps = c('node_id_steps'), name = c('name'), opType = c('op_type'), inputs = c('inputs'),
      outputs = c('outputs'), executed = c('executed'), scope = c('scope'), compiled = c('compiled_node_id'),
      attrs = c('attrs'), kind = c('kind'), domain = c('domain'), fused = c('fused_from'), tasks = c('mapped_task_ids');
    const time = isObject(columns) && isObject(columns.time_us) ? columns.time_us : {};
    const median = column(time, 'median_us'), q1 = column(time, 'q1_us'), q3 = column(time, 'q3_us'),
      samples = column(time, 'samples');
    const opTypes = t('op_types'), attrSets = t('attrs'), kinds = t('kinds'), domains = t('domains');
    // A tensor: a value's index, -1 an omitted input, or a name no value holds.
    // An index past the values names nothing: left out.
    const names = (refs) => (Array.isArray(refs) ? refs : []).map((r) =>
      (isInt(r) ? (r < 0 ? '' : isObject(values[r]) ? values[r].name : undefined) : r)).filter((r) => r !== undefined);
    const more = isObject(extra) ? extra : {};
    let id = 0;
    return steps.map((step, i) => {
      id += isInt(step) ? step : 0;
      const n = {node_id: id, name: name[i], op_type: entry(opTypes, opType[i]), inputs: names(inputs[i]),
        outputs: names(outputs[i]), executed: executed[i] !== 0};
      if (isInt(scope[i]) && scope[i] >= 0) n.scope = scope[i];
      if (isInt(compiled[i]) && compiled[i] >= 0) n.compiled_node_id = compiled[i];
      const a = entry(attrSets, attrs[i]);
      if (isObject(a)) n.attrs = a;
      const k = entry(kinds, kind[i]);
      if (typeof k === 'string') n.kind = k;
      const d = entry(domains, domain[i]);
      if (typeof d === 'string' && d) n.domain = d;
      if (Array.isArray(fused[i])) n.fused_from = fused[i];
      if (Array.isArray(tasks[i])) n.mapped_task_ids = tasks[i];
      if (typeof median[i] === 'number') {
        const lo = typeof q1[i] === 'number' ? q1[i] : 0, hi = typeof q3[i] === 'number' ? q3[i] : 0;
        n.time_us = {median_us: median[i], q1_us: lo, q3_us: hi, iqr_us: hi - lo, samples: isInt(samples[i]) ? samples[i] : 0};
      }
      const x = more[i];
      if (isObject(x)) Object.assign(n, x);
      return n;
    });
  }

  // A route's end: a node's id, or -1 - s for scope s.
  const routeEnd = (e) => (isInt(e) && e < 0 ? {scope: -1 - e} : {node: isInt(e) ? e : 0});

  function layoutRows(layout) {
    if (!isObject(layout)) return;
    if (isObject(layout.routes)) {
      const r = layout.routes, to = column(r, 'to'), points = column(r, 'points'), weight = column(r, 'weight');
      layout.routes = column(r, 'from').map((from, i) => ({from: routeEnd(from), to: routeEnd(to[i]),
        points: Array.isArray(points[i]) ? points[i] : [], weight: isInt(weight[i]) ? weight[i] : 0}));
    }
    if (!isObject(layout.scopes)) return;
    const s = layout.scopes, c = (key) => column(s, key);
    const box = c('box'), crossings = c('crossings'), label = c('label'), nodes = c('nodes'), parent = c('parent'),
      ranks = c('ranks'), folded = c('folded'), slots = c('slots'), edges = c('edges'), dummies = c('dummies');
    // Four numbers per slot and per edge; an edge's dummies beside.
    const quads = (flat) => {
      const out = [];
      for (let k = 0; Array.isArray(flat) && k + 4 <= flat.length; k += 4) out.push(flat.slice(k, k + 4));
      return out;
    };
    layout.scopes = c('path').map((path, i) => ({id: i, box: box[i], crossings: crossings[i], label: label[i], nodes: nodes[i],
      parent: parent[i], path, ranks: ranks[i], folded: isInt(folded[i]) && folded[i] !== 0,
      slots: quads(slots[i]),
      edges: quads(edges[i]).map(([from, to, reversed, w], k) => [from, to, reversed !== 0, w,
        Array.isArray(dummies[i]) && Array.isArray(dummies[i][k]) ? dummies[i][k] : []])}));
  }

  // The layers of a parsed graph.json, in place; a layer not in columns
  // (versions 1 and 2) is left as it is.
  opscope.graphRows = function (graph) {
    if (!isObject(graph)) return graph;
    for (const name of ['compiled', 'framework']) {
      const layer = graph[name];
      if (!isObject(layer) || !isObject(layer.nodes)) continue;
      const tables = isObject(layer.tables) ? layer.tables : {};
      const values = valueRows(layer.values, tables);
      layer.nodes = nodeRows(layer.nodes, layer.extra, tables, values);
      layer.values = values;
      delete layer.extra;
      delete layer.tables;
      layoutRows(layer.layout);
    }
    return graph;
  };
})(typeof window !== 'undefined' ? window : globalThis);
