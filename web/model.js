'use strict';
// model.js: indexes graph.json, trace.json and summary.json for the views.
// The library already laid out the graphs, mapped the layers and summarised
// the run; the page only looks things up, it never recomputes them.
var opscope = window.opscope || (window.opscope = {});
(function () {
  opscope.DATA_MOVEMENT = 'data movement';

  // The row of summary.json's op-type table a task is counted in.
  opscope.opTypeRowOf = function (task) {
    return task.cat === 'memcpy_h2d' || task.cat === 'memcpy_d2h' ? opscope.DATA_MOVEMENT : task.op_type;
  };

  opscope.buildModel = function (graph, trace, summary) {
    const model = {graph, summary: summary || {}, layers: {}, tasks: [], tasksById: new Map(), lanes: [], flows: []};
    for (const name of ['framework', 'compiled']) model.layers[name] = indexLayer(name, (graph && graph[name]) || {});
    indexTrace(model, trace || {});
    return model;
  };

  function indexLayer(name, layer) {
    const nodes = layer.nodes || [];
    const byId = new Map(nodes.map((n) => [n.node_id, n]));
    const seen = new Set();
    const edges = [];
    for (const v of layer.values || []) {
      if (v.producer === null || v.producer === undefined || !byId.has(v.producer)) continue;
      for (const c of v.consumers || []) {
        const key = v.producer + '>' + c;
        if (!byId.has(c) || seen.has(key)) continue;
        seen.add(key);
        edges.push({from: v.producer, to: c, value: v.name});
      }
    }
    return {name, nodes, byId, edges};
  }

  function indexTrace(model, trace) {
    const events = Array.isArray(trace) ? trace : trace.traceEvents || [];
    const laneByKey = new Map();
    const lane = (pid, tid) => {
      const key = pid + ':' + tid;
      if (!laneByKey.has(key)) laneByKey.set(key, {key, pid, tid, name: 'stream ' + tid, tasks: []});
      return laneByKey.get(key);
    };
    const flowStarts = new Map();
    for (const e of events) {
      if (e.ph === 'M' && e.name === 'thread_name') lane(e.pid, e.tid).name = (e.args && e.args.name) || 'stream ' + e.tid;
    }
    for (const e of events) {
      if (e.ph === 'X') {
        const a = e.args || {};
        const task = {
          index: model.tasks.length, task_id: a.task_id, node_id: a.node_id === undefined ? -1 : a.node_id,
          op_id: a.op_id, op_type: a.op_type || e.name, kernel: a.kernel || '', grid: a.grid, block: a.block,
          name: e.name, cat: e.cat || '', ts: e.ts, dur: e.dur || 0, lane: lane(e.pid, e.tid),
        };
        model.tasks.push(task);
        task.lane.tasks.push(task);
        if (!model.tasksById.has(task.task_id)) model.tasksById.set(task.task_id, []);
        model.tasksById.get(task.task_id).push(task);
      } else if (e.ph === 's') {
        flowStarts.set(e.id, e);
      } else if (e.ph === 'f' && flowStarts.has(e.id)) {
        const s = flowStarts.get(e.id);
        model.flows.push({name: e.name, from: lane(s.pid, s.tid), to: lane(e.pid, e.tid), fromTs: s.ts, toTs: e.ts});
      }
    }
    model.lanes = [...laneByKey.values()].sort((a, b) => a.pid - b.pid || a.tid - b.tid);
    model.lanes.forEach((l, i) => (l.row = i));
    let t0 = Infinity, t1 = -Infinity;
    for (const t of model.tasks) {
      t0 = Math.min(t0, t.ts);
      t1 = Math.max(t1, t.ts + t.dur);
    }
    model.timeRange = model.tasks.length ? [t0, t1] : [0, 1];
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
    return (compiledNode.mapped_task_ids || []).flatMap((id) => model.tasksById.get(id) || []);
  };
  opscope.nodeOfTask = function (model, task) {
    return task.node_id >= 0 ? model.layers.compiled.byId.get(task.node_id) || null : null;
  };

  opscope.formatUs = function (us) {
    if (us === undefined || us === null || isNaN(us)) return '–';
    if (us >= 1e6) return (us / 1e6).toFixed(3) + ' s';
    if (us >= 1e3) return (us / 1e3).toFixed(3) + ' ms';
    return (us >= 100 ? us.toFixed(1) : us.toFixed(3)) + ' µs';
  };
})();
