'use strict';
// model.js: indexes graph.json, trace.json and summary.json for the views.
// The library already laid out the graphs, mapped the layers and summarised
// the run; the page only looks things up, it never recomputes them. A trace
// alone (ops-debug profile's timeline.json) is a model without graph layers.
var opscope = window.opscope || (window.opscope = {});
(function () {
  opscope.DATA_MOVEMENT = 'data movement';

  // The row of summary.json's op-type table a task is counted in.
  opscope.opTypeRowOf = function (task) {
    return task.cat === 'memcpy_h2d' || task.cat === 'memcpy_d2h' ? opscope.DATA_MOVEMENT : task.op_type;
  };

  opscope.buildModel = function (graph, trace, summary) {
    opscope.graphRows(graph);  // version 3's columns as lists of objects (graph_rows.js)
    const model = {graph, hasGraph: !!graph, summary: summary || {}, layers: {}, tasks: [], tasksById: new Map(),
      lanes: [], flows: []};
    // The machine's calibrated roofs, when the run recorded them.
    const roof = summary && summary.roofline;
    model.peaks = roof && roof.peaks && typeof roof.peaks.bandwidth_gbs === 'number' ? roof.peaks : null;
    // A framework node's fusion reason is worded from its compiled node.
    const compiledById = new Map(((graph && graph.compiled && graph.compiled.nodes) || []).map((n) => [n.node_id, n]));
    for (const name of ['framework', 'compiled']) model.layers[name] = indexLayer(name, (graph && graph[name]) || {}, compiledById);
    indexTrace(model, trace || {});
    return model;
  };

  // graph/ir's NamespaceOf: "/layer1/conv" for "/layer1/conv/Conv", "" for a name without a scope.
  const namespaceOf = (name) => {
    const last = name.lastIndexOf('/');
    return name.startsWith('/') && last > 0 ? name.slice(0, last) : '';
  };

  function indexLayer(name, layer, compiledById) {
    // A file from elsewhere may hold anything: only objects are nodes and values.
    const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);
    const nodes = Array.isArray(layer.nodes) ? layer.nodes.filter(isObject) : [];
    const values = Array.isArray(layer.values) ? layer.values.filter(isObject) : [];
    // graph.json names a node's tensors only; their dtype and shape are the values'.
    const valueByName = new Map(values.map((v) => [v.name, v]));
    // What graph.json leaves out of a node (graph/export/graph_json.h's
    // ExpandGraphJson rebuilds the same), and what report.html's older
    // slimming left out (src/report/page_data.cc).
    for (const n of nodes) {
      // The views write a node's op type into its box and title: a text, whatever the file held.
      if (typeof n.op_type !== 'string') n.op_type = n.op_type === undefined || n.op_type === null ? '' : String(n.op_type);
      if (n.layer === undefined) n.layer = name;
      if (n.executable === undefined) n.executable = true;
      if (n.kind === undefined) n.kind = 'op';
      if (n.namespace === undefined) n.namespace = namespaceOf(String(n.name || ''));
      const c = n.compiled_node_id === undefined ? null : compiledById.get(n.compiled_node_id);
      if (n.reason === undefined && n.executed === false && c) n.reason = `fused into ${c.op_type} '${c.name}' (node ${c.node_id})`;
      if (n.mapped_task_ids === undefined && c) n.mapped_task_ids = c.mapped_task_ids || [];
      for (const key of ['inputs', 'outputs']) {
        n[key] = (Array.isArray(n[key]) ? n[key] : []).map((t) => {
          const ref = typeof t === 'string' ? {name: t} : t && typeof t === 'object' ? t : {name: String(t)};
          if (!('dtype' in ref)) {
            const v = valueByName.get(ref.name);
            if (v) {
              ref.dtype = v.dtype;
              ref.shape = v.shape;
            }
          }
          return ref;
        });
      }
    }
    // A value's producer and consumers, when graph.json left them out, as
    // graph/ir's Rebuild sets them: the last node writing it, each node
    // reading it once, in node order.
    if (values.some((v) => v.consumers === undefined)) {
      for (const v of values) {
        v.producer = null;
        v.consumers = [];
      }
      for (const n of nodes) {
        for (const t of n.outputs) if (t.name && valueByName.has(t.name)) valueByName.get(t.name).producer = n.node_id;
        for (const t of n.inputs) {
          const c = t.name ? valueByName.get(t.name) : undefined;
          if (c && c.consumers[c.consumers.length - 1] !== n.node_id) c.consumers.push(n.node_id);
        }
      }
    }
    const byId = new Map(nodes.map((n) => [n.node_id, n]));
    // One edge per producer and consumer. A value lists each consumer once,
    // so only a producer of several values needs a set of the consumers it
    // already links (string keys for every pair cost a 100,000-node model
    // a quarter of a second).
    const firstConsumers = new Map(), linked = new Map();
    const edges = [];
    for (const v of values) {
      const p = v.producer;
      if (p === null || p === undefined || !byId.has(p)) continue;
      let seen = null;
      if (firstConsumers.has(p)) {
        seen = linked.get(p);
        if (!seen) linked.set(p, seen = new Set(firstConsumers.get(p)));
      } else {
        firstConsumers.set(p, v.consumers || []);
      }
      for (const c of v.consumers || []) {
        if (!byId.has(c)) continue;
        if (seen) {
          if (seen.has(c)) continue;
          seen.add(c);
        }
        edges.push({from: p, to: c, value: v.name});
      }
    }
    // layout: the library's scopes, their topology and the opening view (graph_layout.js).
    return {name, nodes, byId, edges, values, graphLayout: layer.layout || null};
  }

  // Timestamps are µs with ns digits; sums of them differ in the last bits.
  const EPS_US = 1e-4;

  // One event of the trace. What only the details read stays in args: a
  // million tasks are a million of these.
  class Task {
    constructor(index, e, a, lane) {
      this.index = index;
      this.task_id = a.task_id;
      this.node_id = a.node_id === undefined ? -1 : a.node_id;
      this.op_type = a.op_type || e.name;
      this.name = e.name;
      this.cat = e.cat || '';
      this.ts = e.ts;
      this.dur = e.ph === 'X' ? e.dur || 0 : 0;
      this.lane = lane;
      this.args = a;
      this.depth = 0;
      this.instant = e.ph !== 'X';
      this.failing = a.failing === true;
      this.unfinished = a.unfinished === true;
    }
    get op_id() { return this.args.op_id; }
    get kernel() { return this.args.kernel || ''; }
    get grid() { return this.args.grid; }
    get block() { return this.args.block; }
  }

  // Every task of that id (the same task in each iteration).
  opscope.tasksWithId = function (model, id) {
    const seen = model.tasksById.get(id);
    return seen === undefined ? [] : Array.isArray(seen) ? seen : [seen];
  };

  // Lanes are keyed by process and thread: ops-debug's host (pid 1) and device
  // (pid 2) both have a thread 1.
  function indexTrace(model, trace) {
    const events = Array.isArray(trace) ? trace : trace.traceEvents || [];
    const laneByKey = new Map(), processNames = new Map();
    let last = null;  // events come in runs on one thread: no key to build for most
    const lane = (pid, tid) => {
      if (last && last.pid === pid && last.tid === tid) return last;
      const key = pid + ':' + tid;
      if (!laneByKey.has(key)) laneByKey.set(key, {key, pid, tid, thread: 'stream ' + tid, tasks: [], depth: 1});
      return (last = laneByKey.get(key));
    };
    const flowStarts = new Map(), flowEnds = [];
    for (const e of events) {
      if (e.ph !== 'M') continue;
      if (e.name === 'thread_name') lane(e.pid, e.tid).thread = (e.args && e.args.name) || 'stream ' + e.tid;
      else if (e.name === 'process_name' && e.args && e.args.name) processNames.set(e.pid, e.args.name);
    }
    for (const e of events) {
      if (e.ph === 'X' || e.ph === 'i' || e.ph === 'I') {
        const a = e.args || {};
        const task = new Task(model.tasks.length, e, a, lane(e.pid, e.tid));
        model.tasks.push(task);
        task.lane.tasks.push(task);
        if (task.task_id === undefined) continue;  // an ops-debug event: no task to see again in other iterations
        // Most ids are seen once: an array only for those seen again (other iterations).
        const seen = model.tasksById.get(task.task_id);
        if (seen === undefined) model.tasksById.set(task.task_id, task);
        else if (Array.isArray(seen)) seen.push(task);
        else model.tasksById.set(task.task_id, [seen, task]);
      } else if (e.ph === 's') {
        flowStarts.set(e.id, e);
      } else if (e.ph === 'f') {
        flowEnds.push(e);
      }
    }
    model.lanes = [...laneByKey.values()].sort((a, b) => a.pid - b.pid || a.tid - b.tid);
    // With one process its name adds nothing ("cpu / compute 0"); with more it tells the lanes apart.
    const several = new Set(model.lanes.map((l) => l.pid)).size > 1;
    model.lanes.forEach((l, i) => {
      l.row = i;
      l.name = several ? `${processNames.get(l.pid) || 'process ' + l.pid} / ${l.thread}` : l.thread;
      nest(l);
    });
    model.index = new opscope.TimelineIndex(model);
    // A flow binds to the deepest event open at each of its ends: its producer and its consumer.
    model.flowsOfTask = new Map();
    const flowOf = (i, f) => {
      if (i < 0) return;
      if (!model.flowsOfTask.has(i)) model.flowsOfTask.set(i, []);
      model.flowsOfTask.get(i).push(f);
    };
    for (const e of flowEnds) {
      const s = flowStarts.get(e.id);
      if (!s) continue;
      const from = lane(s.pid, s.tid), to = lane(e.pid, e.tid);
      const a = model.index.deepestAt(from, s.ts, EPS_US), b = model.index.deepestAt(to, e.ts, EPS_US);
      const f = {index: model.flows.length, name: e.name, cat: e.cat || s.cat || '', from, to, fromTs: s.ts, toTs: e.ts,
        fromDepth: a.depth, toDepth: b.depth, fromTask: a.index, toTask: b.index};
      model.flows.push(f);
      flowOf(f.fromTask, f);
      if (f.toTask !== f.fromTask) flowOf(f.toTask, f);
    }
    let t0 = Infinity, t1 = -Infinity;
    for (const t of model.tasks) {
      t0 = Math.min(t0, t.ts);
      t1 = Math.max(t1, t.ts + t.dur);
    }
    model.timeRange = model.tasks.length ? [t0, t1] : [0, 1];
  }

  // Events nest within a thread (an api span holds its phases): each gets the
  // depth of the spans still open when it starts, so no two on one sub-row overlap.
  function nest(lane) {
    // An instant is a mark on the lane's first row, not a span that holds others.
    const order = lane.tasks.filter((t) => !t.instant).sort((a, b) => a.ts - b.ts || b.dur - a.dur || a.index - b.index);
    const openEnds = [];
    for (const t of order) {
      while (openEnds.length && openEnds[openEnds.length - 1] <= t.ts + EPS_US) openEnds.pop();
      t.depth = openEnds.length;
      openEnds.push(t.ts + t.dur);
      lane.depth = Math.max(lane.depth, openEnds.length);
    }
  }

  // The framework node's compiled node, the compiled node's framework nodes.
  opscope.compiledOf = function (model, frameworkNode) {
    const id = frameworkNode.compiled_node_id;
    return id === undefined ? null : model.layers.compiled.byId.get(id) || null;
  };
  opscope.frameworkOf = function (model, compiledNode) {
    return (compiledNode.fused_from || []).map((id) => model.layers.framework.byId.get(id)).filter(Boolean);
  };
  opscope.tasksOf = function (model, compiledNode) {
    return (compiledNode.mapped_task_ids || []).flatMap((id) => opscope.tasksWithId(model, id));
  };
  // A node's paths in its layer: every node it depends on (ancestors) and
  // every node that depends on it (descendants), along the tensors' edges, as
  // `inspector-cli path --node` prints them. The adjacency is built once per layer.
  opscope.cone = function (layer, nodeId) {
    if (!layer.adjacency) {
      const up = new Map(), down = new Map(), push = (m, k, v) => (m.get(k) || m.set(k, []).get(k)).push(v);
      for (const e of layer.edges) {
        push(down, e.from, e.to);
        push(up, e.to, e.from);
      }
      layer.adjacency = {up, down};
    }
    const walk = (next) => {
      const seen = new Set(), todo = [nodeId];
      while (todo.length) {
        for (const id of next.get(todo.pop()) || []) {
          if (id === nodeId || seen.has(id)) continue;
          seen.add(id);
          todo.push(id);
        }
      }
      return seen;
    };
    return {ancestors: walk(layer.adjacency.up), descendants: walk(layer.adjacency.down)};
  };

  opscope.nodeOfTask = function (model, task) {
    return task.node_id >= 0 ? model.layers.compiled.byId.get(task.node_id) || null : null;
  };

  // args.efficiency is lower bound / measured: 0.01 -> "1.0 %"; above 100 %
  // the kernel beat a roof, and args.above_roof says which and why.
  opscope.formatEfficiency = function (efficiency) {
    const pct = efficiency * 100;
    return (pct < 1 ? pct.toPrecision(2) : pct.toFixed(1)) + ' %';
  };
  opscope.hasEfficiency = (args) => typeof args.efficiency === 'number' && args.efficiency >= 0;

  // Past 100 % the bound was beaten: which roof and why, from args.above_roof
  // (roofline.h's AboveRoofNote, as a kind); a trace older than that field
  // says only which roof, from args.bound. '' at or under 100 %.
  const kAboveRoof = {
    cache: 'above the memory roof: its data came from cache, not DRAM',
    beats_gemm: "above the compute roof (the calibrated GEMM's rate): faster than that GEMM, under the FMA loop's peak",
    roof_too_low: 'above the compute roof, which is then too low for this machine: calibrated on a loaded ' +
      'machine, or given by --peak-flops',
  };
  opscope.aboveRoofNote = function (args) {
    if (!opscope.hasEfficiency(args) || !(args.efficiency > 1)) return '';
    if (Object.prototype.hasOwnProperty.call(kAboveRoof, args.above_roof)) return kAboveRoof[args.above_roof];
    return args.bound === 'memory' ? kAboveRoof.cache : 'above the ' + String(args.bound) + ' roof';
  };

  opscope.formatBytes = function (bytes) {
    if (typeof bytes !== 'number') return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB'];
    let v = bytes, u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      ++u;
    }
    return u === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[u]} (${bytes.toLocaleString('en-US')} B)`;
  };

  // One element: h('a', {class: 'link', 'data-node-id': 3}, 'text', child, ...);
  // null, undefined and false children are left out, arrays spread.
  opscope.h = function (tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === 'class') e.className = v;
      else if (k.startsWith('data-')) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
    return e;
  };

  opscope.formatUs = function (us) {
    if (us === undefined || us === null || isNaN(us)) return '–';
    if (us >= 1e6) return (us / 1e6).toFixed(3) + ' s';
    if (us >= 1e3) return (us / 1e3).toFixed(3) + ' ms';
    return (us >= 100 ? us.toFixed(1) : us.toFixed(3)) + ' µs';
  };
})();
