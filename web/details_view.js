'use strict';
// details_view.js: the mapping of whatever is selected (framework node ->
// compiled node -> tasks, and back), and summary.json's tables.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const h = opscope.h;

  const nodeLink = (n) => h('a', {class: 'link', href: '#', 'data-link': 'node', 'data-layer': n.layer,
    'data-node-id': n.node_id}, n.name || `${n.op_type} #${n.node_id}`);
  const taskLink = (t) => h('a', {class: 'link', href: '#', 'data-link': 'task', 'data-task-index': t.index},
    `#${t.task_id}`);

  function shapeText(v) {
    if (!v || !v.shape) return v && v.dtype ? v.dtype : '?';
    return `${v.dtype || '?'}[${v.shape.map((d) => (d === null ? '?' : d)).join(',')}]`;
  }

  function facts(rows) {
    return h('dl', {class: 'facts'}, rows.filter(Boolean).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  }

  // Fusion and a resolved If are the compiler's normal work, worded and
  // coloured as such; only a node that cannot run is shown as a problem.
  function statusLine(n) {
    const state = opscope.nodeState(n);
    if (state === 'not-executable') return h('p', {class: 'status bad'}, 'not executable: ' + (n.not_executable_reason || 'no kernel'));
    if (state === 'fused-away') return h('p', {class: 'status fused'}, 'ran inside its compiled node: ' + (n.reason || 'fused'));
    if (state === 'resolved') return h('p', {class: 'status neutral'}, 'resolved at compile time: ' + (n.reason || n.not_executable_reason || 'its branch was inlined'));
    if (state === 'not-executed') return h('p', {class: 'status off'}, 'not executed: ' + (n.reason || 'no task ran'));
    return h('p', {class: 'status ok'}, 'executed');
  }

  function taskTable(model, tasks) {
    if (!tasks.length) return h('p', {class: 'muted'}, 'no task ran for it');
    return h('table', {class: 'mini tasks'},
      h('tr', {}, h('th', {}, 'task'), h('th', {}, 'stream'), h('th', {}, 'start'), h('th', {}, 'duration'), h('th', {}, 'kernel'),
        h('th', {class: 'num'}, 'achieved')),
      tasks.map((t) => h('tr', {'data-task-index': t.index}, h('td', {}, taskLink(t)), h('td', {}, t.lane.name),
        h('td', {class: 'num'}, opscope.formatUs(t.ts)), h('td', {class: 'num'}, opscope.formatUs(t.dur)),
        h('td', {class: 'kernel'}, t.kernel || '–'), h('td', {class: 'num achieved'}, ...opscope.achievedLines(model, taskSum(model, t), {compact: true})))));
  }

  // One task as the sum achievedLines takes (perf.js).
  function taskSum(model, t) {
    const p = opscope.taskPerf(model, t);
    return p ? {bytes: p.bytes, flops: p.flops, cost_us: t.dur, bw_ns: p.peakGbs ? p.bytes / p.peakGbs : 0,
      flops_ns: p.peakGflops ? p.flops / p.peakGflops : 0} : {cost_us: 0};
  }

  function tensors(list) {
    return (list || []).map((v) =>
      h('div', {class: 'tensor'}, h('span', {}, v.name || '(none)'), ' ', h('span', {class: 'muted'}, shapeText(v))));
  }

  // A node's inputs, weights apart: initializers and the outputs of the
  // Constant / Identity nodes the graph view attaches to it instead of drawing.
  const constantsByLayer = new WeakMap();
  function constantNames(layer) {
    if (!constantsByLayer.has(layer)) {
      const names = new Set((layer.values || []).filter((v) => v.constant).map((v) => v.name));
      for (const n of layer.nodes) if (n.attached_to) for (const o of n.outputs || []) names.add(o.name);
      constantsByLayer.set(layer, names);
    }
    return constantsByLayer.get(layer);
  }
  function inputRows(model, n) {
    const layer = model.layers[n.layer], constants = constantNames(layer);
    const weights = (n.inputs || []).filter((t) => constants.has(t.name));
    const attached = layer.nodes.filter((a) => (a.attached_to || []).includes(n.node_id));
    return [['inputs', tensors((n.inputs || []).filter((t) => !constants.has(t.name)))],
      weights.length && ['weights', tensors(weights)],
      attached.length && ['attached', h('div', {class: 'links'}, attached.map((a) => h('span', {}, nodeLink(a), ` (${a.op_type}) `)))],
      n.attached_to && ['attached to', h('div', {class: 'links'}, n.attached_to.map((id) => layer.byId.get(id)).filter(Boolean).map(nodeLink))]];
  }

  function attrs(n) {
    const entries = Object.entries(n.attrs || {});
    if (!entries.length) return null;
    return ['attrs', h('div', {}, entries.map(([k, v]) => h('div', {class: 'attr'}, k + ' = ' + JSON.stringify(v).slice(0, 80))))];
  }

  function nodeDetails(model, n) {
    const parts = [h('h3', {}, n.name || '(unnamed)'),
      h('p', {class: 'muted'}, `${n.layer} node #${n.node_id} · ${n.op_type}${n.domain ? ' (' + n.domain + ')' : ''} · ${n.kind}`),
      statusLine(n), ...opscope.diffLines(model, n), varianceLine(model, n)].filter(Boolean);
    let tasks;
    if (n.layer === 'framework') {
      const c = opscope.compiledOf(model, n);
      tasks = c ? opscope.tasksOf(model, c) : [];
      parts.push(facts([['namespace', n.namespace || '–'], ...inputRows(model, n), ['outputs', tensors(n.outputs)], attrs(n),
        ['compiled into', c ? h('span', {}, nodeLink(c), ` (${c.op_type})`) : 'no compiled node']]));
      if (c && (c.fused_from || []).length > 1) {
        parts.push(h('p', {class: 'muted'}, 'fused with: '), h('div', {class: 'links'},
          opscope.frameworkOf(model, c).filter((f) => f.node_id !== n.node_id).map(nodeLink)));
      }
    } else {
      tasks = opscope.tasksOf(model, n);
      const from = opscope.frameworkOf(model, n);
      parts.push(facts([['namespace', n.namespace || '–'], ...inputRows(model, n), ['outputs', tensors(n.outputs)], attrs(n),
        n.layout && ['layout', `${n.layout.from} → ${n.layout.to}`],
        ['framework nodes', from.length ? h('div', {class: 'links'}, from.map(nodeLink)) : (n.mapped_by || 'none: inserted by the compiler (' + n.kind + ')')],
        // Another engine's graph (inspector-cli import-ort): how the node was tied to the framework's.
        from.length && n.mapped_by && ['mapped', h('span', {class: 'mapped-by'}, n.mapped_by)]]));
    }
    parts.push(...opscope.accuracyLines(model, n));
    parts.push(h('h4', {}, `tasks (${tasks.length})`), taskTable(model, tasks));
    return parts;
  }

  // summary.json's variance finding of a compiled node (a framework node: of
  // the node it was compiled into): its time is no one speed.
  function varianceOf(model, n) {
    const c = n.layer === 'compiled' ? n : opscope.compiledOf(model, n);
    return c ? (model.summary.variance || []).find((v) => v.node_id === c.node_id) || null : null;
  }
  function varianceLine(model, n) {
    const v = varianceOf(model, n);
    return v ? h('p', {class: 'status variance'}, `time varies ${Math.round(v.max_us / v.min_us)}x between iterations: ` +
      `${opscope.formatUs(v.min_us)} in iteration ${v.fastest_iteration} to ${opscope.formatUs(v.max_us)} in iteration ` +
      `${v.slowest_iteration} of ${v.iterations}`) : null;
  }

  // Under a node's facts: the link that lights up its paths, or, when they are lit, what they hold.
  function pathLine(model, n, cone, kind) {
    if (kind === 'accuracy-path') {
      return h('p', {class: 'paths'}, `the path from the inputs to the first divergent node: ${cone.ancestors.size} ` +
        'node(s) it depends on in the compiled graph, with their framework nodes and tasks (Esc clears)');
    }
    if (cone) {
      return h('p', {class: 'paths'}, `paths lit: ${cone.ancestors.size} ancestor(s) and ${cone.descendants.size} ` +
        `descendant(s) in the ${n.layer} graph, with their counterparts and tasks (Esc clears)`);
    }
    return h('p', {class: 'paths'}, h('a', {class: 'link', href: '#', 'data-link': 'cone', 'data-layer': n.layer,
      'data-node-id': n.node_id}, 'highlight its paths'), h('span', {class: 'muted'}, ' (ancestors and descendants)'));
  }

  function criticalDetails(model, sel) {
    return [h('h3', {}, 'critical path'), h('p', {class: 'muted'}, 'the chain of tasks that sets the span (summary.json)'),
      facts([['tasks', String(sel.tasks.length)], ['total', opscope.formatUs(sel.total_us)]]),
      h('h4', {}, `tasks (${sel.tasks.length})`), taskTable(model, sel.tasks)];
  }

  const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : null);

  function launchText(t) {
    const a = t.args, parts = [];
    if (t.grid) parts.push(`grid [${t.grid}] block [${t.block}]`);
    if (a.vector_width !== undefined) parts.push(`vector width ${a.vector_width}`);
    // A device kernel's resources, where its backend told them (cuda): what limits its occupancy.
    if (typeof a.registers_per_thread === 'number') parts.push(`${a.registers_per_thread} registers/thread`);
    if (typeof a.shared_bytes_per_block === 'number') parts.push(`${count(a.shared_bytes_per_block)} B shared/block`);
    if (typeof a.occupancy === 'number') {
      parts.push(`occupancy ${Math.round(a.occupancy * 100)}% (${a.active_blocks_per_sm} blocks/SM)`);
    }
    return parts.length ? parts.join(' · ') : null;
  }

  function buffers(list) {
    if (!Array.isArray(list) || !list.length) return null;
    return h('div', {}, list.map((b) => h('div', {class: 'tensor'}, b.address || '?', ' ',
      h('span', {class: 'muted'}, opscope.formatBytes(b.bytes)))));
  }

  // What profile and inspector add to a kernel's args (opscope/roofline.h);
  // an older trace.json has none of them, and then none is shown.
  function costRows(model, t) {
    const a = t.args, rows = [];
    if (typeof a.bytes_read === 'number' || typeof a.bytes_written === 'number') {
      rows.push(['bytes read', opscope.formatBytes(a.bytes_read)], ['bytes written', opscope.formatBytes(a.bytes_written)]);
    }
    if (typeof a.bytes === 'number') rows.push(['bytes', opscope.formatBytes(a.bytes)]);
    if (typeof a.flops === 'number') rows.push(['FLOPs', count(a.flops)]);
    if (typeof a.bound === 'string') {
      rows.push(['bound', a.bound === 'none' ? 'none (the op has no cost model)' : a.bound]);
    }
    if (typeof a.lower_bound_us === 'number' && a.lower_bound_us >= 0) rows.push(['lower bound', opscope.formatUs(a.lower_bound_us)]);
    if (opscope.hasEfficiency(a)) {
      const e = a.efficiency;
      const note = e > 1 ? opscope.aboveRoofNote(a) : e > 0 ? `${(1 / e).toFixed(1)}× its lower bound` : '';
      rows.push(['efficiency', h('span', {class: 'efficiency'}, h('b', {}, opscope.formatEfficiency(e)),
        note ? h('span', {class: 'muted'}, ' (' + note + ')') : null)]);
    }
    // What it achieved over its measured time, against the machine's peaks (perf.js).
    const perf = opscope.taskPerf(model, t);
    if (perf) {
      rows.push(['achieved', h('span', {class: 'achieved'}, opscope.rateText(perf.gbs, perf.bwShare, 'GB/s'), ' · ',
        opscope.rateText(perf.gflops, perf.flopsShare, 'GFLOP/s'))]);
      if (perf.peakGbs) {
        rows.push(['peaks', `${opscope.formatRate(perf.peakGbs, 'GB/s')} · ${opscope.formatRate(perf.peakGflops, 'GFLOP/s')}`]);
      }
    }
    return rows;
  }

  // A diagnosis record's tensors with the stats the recorder took (null: none).
  function tensorStats(list) {
    if (!Array.isArray(list) || !list.length) return null;
    const num = (v) => (typeof v === 'number' ? Number(v.toPrecision(4)).toString() : '–');
    return h('table', {class: 'mini tensor-stats'},
      h('tr', {}, h('th', {}, 'tensor'), h('th', {}, 'shape'), h('th', {}, 'min … max'), h('th', {class: 'num'}, 'mean'),
        h('th', {class: 'num'}, 'NaN/Inf')),
      list.map((v) => {
        const st = v.stats;
        const bad = st && (st.nan > 0 || st.inf > 0);
        return h('tr', {class: bad ? 'bad' : ''}, h('td', {}, `${v.role === 'input' ? 'in' : 'out'} ${v.name}`),
          h('td', {class: 'tensor'}, v.dtype ? shapeText(v) : opscope.formatBytes(v.bytes)),
          h('td', {class: 'num'}, st ? `${num(st.min)} … ${num(st.max)}` : 'no stats'),
          h('td', {class: 'num'}, st ? num(st.mean) : '–'), h('td', {class: 'num'}, st ? `${st.nan}/${st.inf}` : '–'));
      }));
  }

  // What a diagnosis adds to an event: its place in the recording and its state.
  function recordRows(t) {
    const a = t.args;
    if (typeof a.state !== 'string') return [];
    return [['record', `#${a.seq} · ${a.kind}`],
      ['state', h('span', {class: t.failing ? 'status bad' : t.unfinished ? 'status off' : ''},
        a.state + (t.failing ? ' · the failing launch' : ''))],
      a.extent && ['end', a.extent], a.error && ['error', h('span', {class: 'error'}, a.error)],
      a.attrs && ['attrs', a.attrs], a.event && ['event', a.event],
      a.issued_by && ['issued by', `${a.issued_by.op} (op_id ${a.issued_by.op_id})`],
      a.input_fingerprint && ['fingerprint', a.input_fingerprint]];
  }

  function taskDetails(model, t) {
    const node = opscope.nodeOfTask(model, t), a = t.args;
    // An ops-debug event has no op type of its own (it falls back to the name): its op is args.op.
    const rows = [a.op_type !== undefined && ['op type', t.op_type], a.op !== undefined && ['op', a.op],
      ['kernel', t.kernel || '–'], ['stream', t.lane.name], ['start', opscope.formatUs(t.ts)],
      t.instant ? ['duration', 'an instant'] : ['duration', opscope.formatUs(t.dur) + (t.unfinished ? ' or more' : '')],
      ['category', t.cat], ['op_id', t.op_id || '–'], ...recordRows(t),
      a.iteration !== undefined && ['iteration', String(a.iteration)],
      a.phase !== undefined && ['phase', String(a.phase)],
      launchText(t) && ['launch', launchText(t)],
      !tensorStats(a.tensors) && buffers(a.inputs) && ['inputs', buffers(a.inputs)],
      !tensorStats(a.tensors) && buffers(a.outputs) && ['outputs', buffers(a.outputs)],
      ...costRows(model, t)];
    if (model.hasGraph) {
      rows.push(['compiled node', node ? h('span', {}, nodeLink(node), ` (${node.op_type})`)
        : h('span', {class: 'status off'}, 'none: inserted by the compiler (' + t.cat + ')')]);
    }
    if (node) {
      const from = opscope.frameworkOf(model, node);
      rows.push(['framework nodes', from.length ? h('div', {class: 'links'}, from.map(nodeLink)) : 'none']);
    }
    const what = t.task_id !== undefined ? `task #${t.task_id}` : `${t.cat || 'event'} on ${t.lane.name}`;
    const stats = tensorStats(a.tensors);
    return [h('h3', {}, t.name), h('p', {class: 'muted'}, what), facts(rows), stats && h('h4', {}, 'tensors'), stats];
  }

  function opTypeDetails(model, opType, tasks) {
    const row = (model.summary.op_types || []).find((r) => r.op_type === opType);
    const parts = [h('h3', {}, opType), h('p', {class: 'muted'}, 'op type')];
    if (row) {
      parts.push(facts([['count', String(row.count)], ['total', opscope.formatUs(row.total_us)], ['mean', opscope.formatUs(row.mean_us)],
        ['share', row.share_pct.toFixed(1) + ' %']]));
    }
    parts.push(h('h4', {}, `tasks (${tasks.length})`), taskTable(model, tasks));
    return parts;
  }

  opscope.idleHint = (model) => (model.hasGraph ? 'Click a node, a task or an op type. Everything it maps to lights up.'
    // A diagnosis's records carry their state.
    : model.tasks.some((t) => typeof t.args.state === 'string')
      ? 'Click a record of the timeline or a cause: its launch, state and tensors show here.'
    : 'Click an event of the timeline: its launch, buffers and roofline figures show here.');

  opscope.renderDetails = function (host, model, selection, context) {
    let parts;
    if (!selection) parts = [h('p', {class: 'muted'}, opscope.idleHint(model))];
    else if (selection.kind === 'node' || selection.kind === 'cone' || selection.kind === 'accuracy-path') {
      parts = nodeDetails(model, selection.node);
      parts.splice(3, 0, pathLine(model, selection.node, selection.kind === 'node' ? null : selection.cone, selection.kind));
    } else if (selection.kind === 'critical') parts = criticalDetails(model, selection);
    else if (selection.kind === 'task') parts = taskDetails(model, selection.task);
    else if (selection.kind === 'cause') parts = taskDetails(model, selection.tasks[0]);
    else parts = opTypeDetails(model, selection.opType, context.tasks);
    host.replaceChildren(...parts);
  };

  opscope.renderOpTypes = function (host, model) {
    const rows = model.summary.op_types || [];
    const achieved = new Map(opscope.rangeStats(model, -Infinity, Infinity).map((r) => [r.op_type, r]));
    const table = h('table', {class: 'optypes', id: 'optype-table'},
      h('tr', {}, h('th', {}, 'op type'), h('th', {class: 'num'}, 'count'), h('th', {class: 'num'}, 'total'),
        h('th', {class: 'num'}, 'mean'), h('th', {class: 'share'}, 'share')),
      rows.map((r) => h('tr', {class: 'optype' + (r.data_movement ? ' data-movement' : ''), 'data-op-type': r.op_type},
        // What the type achieved goes under its name: the pane has no room for another column.
        h('td', {}, r.op_type, achieved.has(r.op_type) && achieved.get(r.op_type).cost_us > 0
          ? h('div', {class: 'achieved-inline'}, ...opscope.achievedLines(model, achieved.get(r.op_type), {compact: true})) : null), h('td', {class: 'num'}, String(r.count)), h('td', {class: 'num'}, opscope.formatUs(r.total_us)),
        h('td', {class: 'num'}, opscope.formatUs(r.mean_us)),
        h('td', {class: 'share'}, h('span', {class: 'bar', style: `width:${Math.max(1, r.share_pct).toFixed(1)}%`}),
          h('span', {class: 'pct'}, r.share_pct.toFixed(1) + '%')))));
    const streams = model.summary.streams || [];
    const streamTable = streams.length ? h('table', {class: 'mini streams', id: 'stream-table'},
      h('tr', {}, h('th', {}, 'stream'), h('th', {class: 'num'}, 'tasks'), h('th', {class: 'num'}, 'busy'), h('th', {class: 'num'}, 'idle')),
      streams.map((s) => h('tr', {'data-stream-id': s.stream_id}, h('td', {}, s.name), h('td', {class: 'num'}, String(s.tasks)),
        h('td', {class: 'num'}, opscope.formatUs(s.busy_us)), h('td', {class: 'num'}, opscope.formatUs(s.idle_us))))) : null;
    // Nodes whose time differs more than 10x between iterations (summary.json):
    // no one speed to judge them by, so the page says so beside the totals.
    const variance = (model.summary.variance || []).map((v) => {
      const n = model.layers.compiled.byId.get(v.node_id);
      return h('li', {'data-node-id': v.node_id}, n ? nodeLink(n) : v.node, ' ', h('span', {class: 'muted'}, v.text.slice(v.node.length)));
    });
    // --expected: each output against its file (summary.json's outputs_checked).
    const checks = model.summary.outputs_checked || [];
    const checkTable = checks.length ? h('table', {class: 'mini outputs-checked', id: 'outputs-checked'},
      h('tr', {}, h('th', {}, 'output'), h('th', {}, 'verdict'), h('th', {class: 'num'}, 'mismatched'),
        h('th', {class: 'num'}, 'max abs err'), h('th', {}, 'where')),
      checks.map((c) => h('tr', {class: c.passed ? 'passed' : 'failed', 'data-output': c.name},
        h('td', {title: `${c.describe} against ${c.file}`}, c.name),
        h('td', {class: 'status ' + (c.passed ? 'ok' : 'bad')}, (c.passed ? 'PASSED' : 'FAILED') +
          (c.warnings.length ? ` (${c.warnings.length} warning${c.warnings.length > 1 ? 's' : ''})` : '')),
        h('td', {class: 'num'}, `${c.mismatched} / ${c.total}`),
        h('td', {class: 'num'}, c.max_abs_err === null ? 'not finite' : c.max_abs_err.toPrecision(3)),
        h('td', {title: [c.rule, ...c.warnings].join('\n')}, c.pattern || '–')))) : null;
    // The symptom table (summary.json's findings): what the run shows, its evidence, where to look.
    const findings = (model.summary.findings || []).map((f) => h('li', {'data-kind': f.kind},
      h('span', {class: 'finding-kind'}, `[${f.kind}] `), f.text,
      h('ul', {}, [...f.evidence.map((e) => h('li', {class: 'muted'}, e)), h('li', {class: 'muted'}, 'look at: ' + f.look)])));
    host.replaceChildren(...(checkTable ? [h('h4', {}, 'outputs against --expected'), checkTable] : []),
      ...(findings.length ? [h('h4', {}, 'findings'), h('ul', {class: 'findings', id: 'findings-list'}, findings)] : []),
      table, ...(streamTable ? [h('h4', {}, 'streams'), streamTable] : []),
      ...(variance.length ? [h('h4', {}, 'variance: nodes whose time differs more than 10x between iterations'),
        h('ul', {class: 'variance', id: 'variance-list'}, variance)] : []));
  };
})();
