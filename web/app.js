'use strict';
// app.js: loads the run (embedded in report.html, or fetched from
// `inspector-cli serve`), builds the views and keeps one selection across
// them: whatever is picked in one layer lights up its counterparts in the others.
// A trace alone (ops-debug profile's timeline.json) gets the timeline, the
// details and the roofline chart, without the graph panes. A diagnosis
// (ops-debug diagnose) is a trace alone with its panel: the page opens on
// the failing launch, and a cause selects the launches it names.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const FILES = ['graph.json', 'trace.json', 'summary.json'];
  // A trace shown alone, without a run's graph and summary (the first found).
  const TRACE_ONLY = ['trace.json', 'timeline.json'];
  const ROOFLINE = 'roofline.svg';
  const ACCURACY = 'accuracy.json';  // inspector-cli accuracy, written beside the run

  // Uint8Array.fromBase64 where the browser has it; else four characters to
  // three bytes through a table (atob's string, read a char at a time, took
  // half a second for a 100,000-node run's 15 MB).
  function base64Bytes(text) {
    if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
    const table = new Uint8Array(128);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let i = 0; i < 64; ++i) table[alphabet.charCodeAt(i)] = i;
    const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
    const out = new Uint8Array(text.length / 4 * 3 - pad);
    let o = 0;
    for (let i = 0; i < text.length; i += 4) {
      const g = (table[text.charCodeAt(i)] << 18) | (table[text.charCodeAt(i + 1)] << 12) |
        (table[text.charCodeAt(i + 2)] << 6) | table[text.charCodeAt(i + 3)];
      if (o < out.length) out[o++] = g >> 16;
      if (o < out.length) out[o++] = (g >> 8) & 255;
      if (o < out.length) out[o++] = g & 255;
    }
    return out;
  }

  // Data of 1 MiB or more comes gzipped, in base64 (report/report_page.h):
  // inflated here by the browser's own DecompressionStream.
  async function embedded(name) {
    const e = document.getElementById('opscope-data-' + name);
    if (!e) return null;
    if (e.dataset.encoding !== 'gzip+base64') return JSON.parse(e.textContent);
    const bytes = base64Bytes(e.textContent.trim());
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
    return JSON.parse(text);
  }

  // Which run wrote a file: graph.json and summary.json say it in "run",
  // trace.json in "otherData.run" (null: a file from before run identities).
  function runIdOf(name, file) {
    const run = name === 'trace.json' ? file && file.otherData && file.otherData.run : file && file.run;
    return run && typeof run.id === 'string' ? run.id : null;
  }

  // Files of two runs are refused, as the library refuses them: a folder
  // written again while the page loaded, or files picked from two folders.
  // Files that all lack an identity (written before there was one) are shown.
  function mixedRunError(files) {
    const ids = FILES.map((name) => [name, runIdOf(name, files[name])]);
    const known = ids.filter(([, id]) => id !== null);
    if (!known.length) return null;
    const [firstName, firstId] = known[0];
    const other = ids.find(([, id]) => id !== firstId);
    if (!other) return null;
    return other[1] === null ? `${other[0]} carries no run identity, ${firstName} is of run ${firstId}: files of two runs`
      : `${firstName} is of run ${firstId}, ${other[0]} of run ${other[1]}: files of two runs`;
  }

  // A run: {graph, trace, summary, roofline (SVG text, or null), title}; graph
  // and summary are null for a trace alone.
  async function loadRun() {
    const trace = await embedded('trace.json');
    if (trace) {
      const page = (await embedded('page')) || {};
      const [graph, summary, diagnosis, diff, accuracy] = await Promise.all(
        ['graph.json', 'summary.json', 'diagnosis', 'diff.json', 'accuracy.json'].map(embedded));
      // The roofline chart, when there is one, is already in the page's markup.
      return {graph, trace, summary, roofline: null, title: page.title, diagnosis, diff, accuracy};
    }
    if (location.protocol === 'file:') return null;  // fetch cannot read files next to a file:// page
    const get = async (f, as) => {
      const r = await fetch(f, {cache: 'no-store'});
      if (!r.ok) throw new Error(`${f}: HTTP ${r.status}` + (r.status === 422 ? ': ' + (await r.text()).trim() : ''));
      return as === 'text' ? r.text() : r.json();
    };
    // The server lists what the folder holds, so nothing absent is asked for.
    const present = new Set((await get('files.json')).files);
    const roofline = present.has(ROOFLINE) ? get(ROOFLINE, 'text').catch((e) => ({error: e.message})) : null;
    if (present.has('graph.json') || present.has('summary.json')) {
      const [graph, trace, summary] = await Promise.all(FILES.map((f) => get(f)));
      const mixed = mixedRunError({'graph.json': graph, 'trace.json': trace, 'summary.json': summary});
      if (mixed) throw new Error(mixed + ' (the folder was written again while the page loaded: reload it)');
      // The server checks it against the folder's run, as report.html's maker does.
      const accuracy = present.has(ACCURACY) ? await get(ACCURACY).catch((e) => ({error: e.message})) : null;
      return {graph, trace, summary, roofline: await roofline, accuracy};
    }
    const alone = TRACE_ONLY.find((f) => present.has(f));
    if (!alone) throw new Error('the served folder holds no graph.json, trace.json or timeline.json');
    return {graph: null, trace: await get(alone), summary: null, roofline: await roofline};
  }

  // The page without data offers to read the files from disk: a run's three,
  // or one trace alone; a roofline.svg beside either.
  function askForFiles() {
    const panel = document.getElementById('load-panel');
    panel.hidden = false;
    document.getElementById('load-files').addEventListener('change', async (ev) => {
      const picked = [...ev.target.files], byName = new Map(picked.map((f) => [f.name, f]));
      const svg = picked.find((f) => f.name.endsWith('.svg'));
      const jsons = picked.filter((f) => !f.name.endsWith('.svg'));
      const error = document.getElementById('load-error');
      const read = async (f) => JSON.parse(await f.text());
      try {
        const roofline = svg ? await svg.text() : null;
        let run;
        if (byName.has('graph.json') || byName.has('summary.json')) {
          const missing = FILES.filter((f) => !byName.has(f));
          if (missing.length) {
            error.textContent = 'missing: ' + missing.join(', ');
            return;
          }
          const [graph, trace, summary] = await Promise.all(FILES.map((f) => read(byName.get(f))));
          const mixed = mixedRunError({'graph.json': graph, 'trace.json': trace, 'summary.json': summary});
          if (mixed) {
            error.textContent = mixed + ': pick the three files of one run folder';
            return;
          }
          run = {graph, trace, summary, roofline};
        } else if (jsons.length === 1) {
          const trace = await read(jsons[0]);
          if (trace && trace.schema === 'opscope.diagnosis/1') {
            error.textContent = jsons[0].name + ': a diagnosis; open its folder with inspector-cli export or serve, ' +
              'or the diagnosis.html ops-debug diagnose wrote beside it';
            return;
          }
          if (!Array.isArray(trace) && !Array.isArray(trace.traceEvents)) {
            error.textContent = jsons[0].name + ': not a trace (no traceEvents)';
            return;
          }
          run = {graph: null, trace, summary: null, roofline, title: jsons[0].name};
        } else {
          error.textContent = 'pick graph.json, trace.json and summary.json, or one trace (timeline.json) alone';
          return;
        }
        panel.hidden = true;
        start(run);
      } catch (e) {
        error.textContent = String(e);
      }
    });
  }

  // Shows the Roofline panel when the page carries a chart or `text` is one.
  function showRoofline(text) {
    const host = document.getElementById('roofline');
    if (text && typeof text === 'object') {
      host.replaceChildren(Object.assign(document.createElement('p'), {className: 'error', textContent: text.error}));
    } else if (text) {
      try {
        host.replaceChildren(opscope.parseSvg(text));
      } catch (e) {
        host.replaceChildren(Object.assign(document.createElement('p'), {className: 'error', textContent: 'roofline.svg refused: ' + e.message}));
      }
    }
    const svg = host.querySelector('svg');
    // Scaled to the pane: a chart sized in pixels only gets the box it was drawn in.
    if (svg && !svg.getAttribute('viewBox') && svg.getAttribute('width') && svg.getAttribute('height')) {
      svg.setAttribute('viewBox', `0 0 ${parseFloat(svg.getAttribute('width'))} ${parseFloat(svg.getAttribute('height'))}`);
    }
    document.getElementById('roofline-section').hidden = !host.firstElementChild;
  }

  class App {
    constructor({graph, trace, summary, roofline, title, diagnosis, diff, accuracy}) {
      const model = (this.model = opscope.buildModel(graph, trace, summary));
      // Against a baseline, and each node's own error: every view reads the nodes' marks, so they come first.
      if (diff && model.hasGraph) opscope.attachDiff(model, diff);
      if (accuracy && model.hasGraph) opscope.attachAccuracy(model, accuracy);
      this.title = title || '';
      this.diagnosis = diagnosis || null;
      document.body.classList.toggle('diagnosis', !!this.diagnosis);
      document.getElementById('diagnosis-pane').hidden = !this.diagnosis;
      this.selection = null;
      this.graphs = {};
      // A trace alone: no graph panes, no op types, no node search; the timeline takes their room.
      document.body.classList.toggle('trace-only', !model.hasGraph);
      for (const id of ['framework-pane', 'compiled-pane', 'optype-section', 'search', 'search-status']) {
        document.getElementById(id).hidden = !model.hasGraph;
      }
      showRoofline(roofline);
      opscope.renderDetails(document.getElementById('details'), model, null, {});
      for (const layer of model.hasGraph ? ['framework', 'compiled'] : []) {
        const host = document.getElementById(layer + '-graph');
        this.graphs[layer] = new opscope.GraphView(host, model.layers[layer], (node) => this.select(node ? {kind: 'node', node} : null));
        const all = model.layers[layer].nodes, attached = all.filter((n) => n.attached_to).length;
        document.getElementById(layer + '-count').textContent = `${all.length} nodes` + (attached ? ` (${attached} constants attached)` : '');
      }
      this.timeline = new opscope.TimelineView(document.getElementById('timeline'), model,
        document.getElementById('tooltip'), (task) => this.select(task ? {kind: 'task', task} : null), {
          legend: document.getElementById('timeline-legend'), search: document.getElementById('timeline-search'),
          searchStatus: document.getElementById('timeline-search-status'), diagnosis: !!this.diagnosis,
          onRange: (range) => this.showRange(range)});
      if (model.hasGraph) opscope.renderOpTypes(document.getElementById('optypes'), model);
      if (model.diff) this.showDiff();
      if (model.accuracy) {
        document.getElementById('accuracy-section').hidden = false;
        document.getElementById('accuracy-facts').textContent = opscope.renderAccuracy(document.getElementById('accuracy'), model);
      }
      if (this.diagnosis) this.showDiagnosis();
      this.fillHeader();
      this.attachLinks();
      if (model.hasGraph) this.attachSearch();
      for (const g of Object.values(this.graphs)) g.fit();
      document.addEventListener('keydown', (ev) => {
        if (ev.key !== 'Escape') return;
        this.select(null);
        this.timeline.setRangeSel(null);
        this.showRange(null);
      });
      // The launch the trace says failed is where the reader starts.
      const failing = model.tasks.find((t) => t.failing);
      if (failing) {
        this.select({kind: 'task', task: failing});
        this.timeline.reveal(failing);
      }
      document.body.dataset.ready = 'true';
    }

    // A range dragged on the timeline: its op types, in the side pane.
    showRange(range) {
      const section = document.getElementById('range-section');
      opscope.renderRange(section, this.model, range);
      if (range) section.scrollIntoView({block: 'nearest'});
    }

    showDiff() {
      document.getElementById('diff-section').hidden = false;
      document.getElementById('diff-facts').textContent = opscope.diffHeadline(this.model.diff);
      opscope.renderDiff(document.getElementById('diff'), this.model, {onNode: (node) => {
        this.select({kind: 'node', node});
        this.graphs[node.layer].centerOn(node.node_id);
      }});
    }

    showDiagnosis() {
      const host = document.getElementById('diagnosis'), p = this.diagnosis;
      const bySeq = new Map(this.model.tasks.filter((t) => t.args.seq !== undefined).map((t) => [t.args.seq, t]));
      opscope.renderDiagnosis(host, p, {onLaunches: (seqs, rank) => {
        const tasks = seqs.map((s) => bySeq.get(s)).filter(Boolean);
        if (!tasks.length) return;
        this.select({kind: 'cause', rank, tasks});
      }});
      document.getElementById('diagnosis-facts').textContent =
        `${p.status}${p.signal ? ' · ' + p.signal : ''} · ${p.causes.length} cause${p.causes.length === 1 ? '' : 's'}`;
    }

    fillHeader() {
      const m = this.model, g = m.graph || {}, s = m.summary;
      if (!m.hasGraph) {
        const span = m.timeRange[1] - m.timeRange[0];
        const what = this.diagnosis ? 'diagnosis' : 'timeline';
        document.querySelector('#topbar .brand').textContent = 'opscope ' + what;
        document.getElementById('model-path').textContent = this.title;
        document.getElementById('run-facts').textContent =
          `${m.tasks.length} events · ${m.lanes.length} lanes · span ${opscope.formatUs(span)}`;
        document.getElementById('timeline-facts').textContent = this.diagnosis
          ? `the recorded trajectory: ${m.lanes.length} lanes, ${m.tasks.length} records, ${m.flows.length} event waits`
          : `${m.lanes.length} lanes, ${m.tasks.length} events, ${m.flows.length} launches`;
        document.title = 'opscope ' + what + (this.title ? ' · ' + this.title : '');
        return;
      }
      document.getElementById('model-path').textContent = (g.model && g.model.path) || '';
      document.getElementById('run-facts').textContent =
        `${m.tasks.length} tasks · ${m.lanes.length} streams · span ${opscope.formatUs(s.span_us)}` +
        (m.diff ? ' · ' + opscope.diffHeadline(m.diff) : '');
      document.getElementById('timeline-facts').textContent =
        `${m.lanes.length} streams, ${m.tasks.length} tasks, ${m.flows.length} event waits`;
      document.getElementById('optype-total').textContent =
        s.total_task_us !== undefined ? opscope.formatUs(s.total_task_us) + ' of tasks' : '';
      document.title = this.title || 'opscope inspector · ' + ((g.model && g.model.path) || 'run').split('/').pop();
    }

    // What a selection lights up, per layer: node ids, and task indexes.
    marksFor(sel) {
      const m = this.model;
      const marks = {framework: [new Set(), new Set()], compiled: [new Set(), new Set()], tasks: [new Set(), new Set()]};
      const [SEL, HI] = [0, 1];
      const markTasks = (tasks, which) => tasks.forEach((t) => marks.tasks[which].add(t.index));
      const markFramework = (nodes, which) => nodes.forEach((n) => marks.framework[which].add(n.node_id));
      if (!sel) return marks;
      if (sel.kind === 'node' && sel.node.layer === 'framework') {
        marks.framework[SEL].add(sel.node.node_id);
        const c = opscope.compiledOf(m, sel.node);
        if (c) {
          marks.compiled[SEL].add(c.node_id);
          markFramework(opscope.frameworkOf(m, c), HI);  // the nodes fused with it
          markTasks(opscope.tasksOf(m, c), HI);
        }
      } else if (sel.kind === 'node') {
        marks.compiled[SEL].add(sel.node.node_id);
        markFramework(opscope.frameworkOf(m, sel.node), SEL);
        markTasks(opscope.tasksOf(m, sel.node), HI);
      } else if (sel.kind === 'cone' || sel.kind === 'accuracy-path') {
        // The node's paths in its layer, their counterparts in the other and their tasks.
        const layer = sel.node.layer, ids = [sel.node.node_id, ...sel.cone.ancestors, ...sel.cone.descendants];
        marks[layer][SEL].add(sel.node.node_id);
        for (const id of ids.slice(1)) marks[layer][HI].add(id);
        const nodes = ids.map((id) => m.layers[layer].byId.get(id)).filter(Boolean);
        const compiled = layer === 'compiled' ? nodes : [...new Set(nodes.map((n) => opscope.compiledOf(m, n)).filter(Boolean))];
        for (const c of compiled) {
          if (layer === 'framework') marks.compiled[HI].add(c.node_id);
          else markFramework(opscope.frameworkOf(m, c), HI);
          markTasks(opscope.tasksOf(m, c), HI);
        }
      } else if (sel.kind === 'critical') {
        markTasks(sel.tasks, SEL);
        for (const t of sel.tasks) {
          const n = opscope.nodeOfTask(m, t);
          if (!n) continue;
          marks.compiled[HI].add(n.node_id);
          markFramework(opscope.frameworkOf(m, n), HI);
        }
      } else if (sel.kind === 'cause') {
        markTasks(sel.tasks, SEL);
      } else if (sel.kind === 'task') {
        marks.tasks[SEL].add(sel.task.index);
        markTasks(opscope.tasksWithId(m, sel.task.task_id), HI);  // the same task in other iterations
        const node = opscope.nodeOfTask(m, sel.task);
        if (node) {
          marks.compiled[SEL].add(node.node_id);
          markFramework(opscope.frameworkOf(m, node), SEL);
        }
      } else if (sel.kind === 'optype') {
        const tasks = m.tasks.filter((t) => opscope.opTypeRowOf(t) === sel.opType);
        markTasks(tasks, HI);
        for (const n of m.layers.compiled.nodes) {
          if (n.op_type !== sel.opType && !tasks.some((t) => t.node_id === n.node_id)) continue;
          marks.compiled[HI].add(n.node_id);
          markFramework(opscope.frameworkOf(m, n), HI);
        }
        sel.tasks = tasks;
      }
      return marks;
    }

    select(sel, {reveal = true} = {}) {
      this.selection = sel;
      const critical = document.querySelector('#critical-toggle input');
      if (critical) critical.checked = !!sel && sel.kind === 'critical';
      const marks = this.marksFor(sel);
      for (const layer of Object.keys(this.graphs)) this.graphs[layer].setMarks(...marks[layer]);
      this.timeline.setMarks(...marks.tasks);
      for (const tr of document.querySelectorAll('#optype-table tr.optype')) {
        tr.classList.toggle('selected', !!sel && sel.kind === 'optype' && tr.dataset.opType === sel.opType);
      }
      opscope.renderDetails(document.getElementById('details'), this.model, sel, sel || {});
      if (this.diagnosis) opscope.markCause(document.getElementById('diagnosis'), sel && sel.kind === 'cause' ? sel.rank : null);
      if (!reveal || !sel) return;
      // Bring the counterparts into view where they are off screen.
      for (const layer of Object.keys(this.graphs)) {
        const first = [...marks[layer][0], ...marks[layer][1]][0];
        if (first !== undefined && !(sel.kind === 'node' && sel.node.layer === layer)) this.graphs[layer].reveal(first);
      }
      const firstTask = [...marks.tasks[0], ...marks.tasks[1]][0];
      if (firstTask !== undefined && sel.kind !== 'task') this.timeline.reveal(this.model.tasks[firstTask]);
    }

    attachLinks() {
      // The details and the op types pane (its variance findings) link alike.
      const follow = (ev) => {
        const a = ev.target.closest('a[data-link]');
        if (!a) return;
        ev.preventDefault();
        if (a.dataset.link === 'task') {
          this.select({kind: 'task', task: this.model.tasks[+a.dataset.taskIndex]});
        } else if (a.dataset.link === 'accuracy-path') {
          this.selectAccuracyPath();
        } else if (a.dataset.link === 'cone') {
          const node = this.model.layers[a.dataset.layer].byId.get(+a.dataset.nodeId);
          this.select({kind: 'cone', node, cone: opscope.cone(this.model.layers[node.layer], node.node_id)});
        } else {
          const node = this.model.layers[a.dataset.layer].byId.get(+a.dataset.nodeId);
          this.select({kind: 'node', node});
          this.graphs[node.layer].centerOn(node.node_id);
        }
      };
      document.getElementById('details').addEventListener('click', follow);
      document.getElementById('optypes').addEventListener('click', follow);
      document.getElementById('accuracy').addEventListener('click', follow);
      // The run's critical path (summary.json), as a toggle over the timeline.
      const path = (this.model.summary.critical_path || {}).task_ids || [];
      const toggle = document.getElementById('critical-toggle');
      toggle.hidden = !this.model.hasGraph || !path.length;
      toggle.querySelector('input').addEventListener('change', (ev) => {
        const tasks = path.flatMap((id) => opscope.tasksWithId(this.model, id));
        this.select(ev.target.checked ? {kind: 'critical', tasks, total_us: this.model.summary.critical_path.total_us} : null);
      });
      document.getElementById('optypes').addEventListener('click', (ev) => {
        const tr = ev.target.closest('tr.optype');
        if (!tr) return;
        const same = this.selection && this.selection.kind === 'optype' && this.selection.opType === tr.dataset.opType;
        this.select(same ? null : {kind: 'optype', opType: tr.dataset.opType});
      });
    }

    // The first divergent node and every node it depends on, from the
    // graph's inputs: the data its error came through, in both layers and
    // on the timeline.
    selectAccuracyPath() {
      const node = this.model.accuracy && this.model.accuracy.firstNode;
      if (!node) return;
      const {ancestors} = opscope.cone(this.model.layers.compiled, node.node_id);
      this.select({kind: 'accuracy-path', node, cone: {ancestors, descendants: new Set()}});
      this.graphs.compiled.centerOn(node.node_id);
    }

    // Enter selects the next node whose name contains the text (framework
    // layer first), and centres it.
    attachSearch() {
      const input = document.getElementById('search'), status = document.getElementById('search-status');
      let hits = [], at = -1, last = null;
      const find = (q) => {
        q = q.trim().toLowerCase();
        if (!q) return [];
        const all = [...this.model.layers.framework.nodes, ...this.model.layers.compiled.nodes];
        const exact = all.filter((n) => (n.name || '').toLowerCase() === q);
        const partial = all.filter((n) => (n.name || '').toLowerCase() !== q && (n.name || '').toLowerCase().includes(q));
        return [...exact, ...partial];
      };
      input.addEventListener('input', () => {
        hits = find(input.value);
        at = -1;
        last = input.value;
        status.textContent = input.value.trim() ? `${hits.length} found` : '';
        input.classList.toggle('no-match', !!input.value.trim() && !hits.length);
      });
      input.addEventListener('keydown', (ev) => {
        if (ev.key !== 'Enter') return;
        if (input.value !== last) {
          hits = find(input.value);
          at = -1;
          last = input.value;
        }
        if (!hits.length) {
          status.textContent = 'no node named like that';
          input.classList.add('no-match');
          return;
        }
        at = (at + 1) % hits.length;
        const node = hits[at];
        this.select({kind: 'node', node});
        this.graphs[node.layer].centerOn(node.node_id);
        status.textContent = `${at + 1} of ${hits.length} (${node.layer})`;
      });
    }
  }

  function start(run) {
    try {
      opscope.app = new App(run);
    } catch (e) {
      showError(e);
    }
  }

  function showError(e) {
    const panel = document.getElementById('load-panel');
    panel.hidden = false;
    document.getElementById('load-error').textContent = 'cannot show this run: ' + (e && e.message ? e.message : e);
  }

  loadRun().then((run) => (run ? start(run) : askForFiles()), showError);
})();
