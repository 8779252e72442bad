'use strict';
// app.js: loads the run (embedded in report.html, or fetched from
// `inspector-cli serve`), builds the views and keeps one selection across
// them: whatever is picked in one layer lights up its counterparts in the others.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const FILES = ['graph.json', 'trace.json', 'summary.json'];

  function embedded(name) {
    const e = document.getElementById('opscope-data-' + name);
    return e ? JSON.parse(e.textContent) : null;
  }

  async function loadRun() {
    const inPage = FILES.map(embedded);
    if (inPage.every(Boolean)) return inPage;
    if (location.protocol === 'file:') return null;  // fetch cannot read files next to a file:// page
    return Promise.all(FILES.map(async (f) => {
      const r = await fetch(f, {cache: 'no-store'});
      if (!r.ok) throw new Error(`${f}: HTTP ${r.status}`);
      return r.json();
    }));
  }

  // The page without data offers to read the three files from disk.
  function askForFiles() {
    const panel = document.getElementById('load-panel');
    panel.hidden = false;
    document.getElementById('load-files').addEventListener('change', async (ev) => {
      const byName = new Map([...ev.target.files].map((f) => [f.name, f]));
      const missing = FILES.filter((f) => !byName.has(f));
      const error = document.getElementById('load-error');
      if (missing.length) {
        error.textContent = 'missing: ' + missing.join(', ');
        return;
      }
      try {
        const run = await Promise.all(FILES.map(async (f) => JSON.parse(await byName.get(f).text())));
        panel.hidden = true;
        start(run);
      } catch (e) {
        error.textContent = String(e);
      }
    });
  }

  class App {
    constructor([graph, trace, summary]) {
      const model = (this.model = opscope.buildModel(graph, trace, summary));
      this.selection = null;
      this.graphs = {};
      for (const layer of ['framework', 'compiled']) {
        const host = document.getElementById(layer + '-graph');
        this.graphs[layer] = new opscope.GraphView(host, model.layers[layer], (node) => this.select(node ? {kind: 'node', node} : null));
        document.getElementById(layer + '-count').textContent = `${model.layers[layer].nodes.length} nodes`;
      }
      this.timeline = new opscope.TimelineView(document.getElementById('timeline'), model,
        document.getElementById('tooltip'), (task) => this.select(task ? {kind: 'task', task} : null));
      opscope.renderOpTypes(document.getElementById('optypes'), model);
      this.fillHeader();
      this.attachLinks();
      this.attachSearch();
      for (const g of Object.values(this.graphs)) g.fit();
      document.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape') this.select(null);
      });
      document.body.dataset.ready = 'true';
    }

    fillHeader() {
      const m = this.model, g = m.graph || {}, s = m.summary;
      document.getElementById('model-path').textContent = (g.model && g.model.path) || '';
      document.getElementById('run-facts').textContent =
        `${m.tasks.length} tasks · ${m.lanes.length} streams · span ${opscope.formatUs(s.span_us)}`;
      document.getElementById('timeline-facts').textContent =
        `${m.lanes.length} streams, ${m.tasks.length} tasks, ${m.flows.length} event waits`;
      document.getElementById('optype-total').textContent =
        s.total_task_us !== undefined ? opscope.formatUs(s.total_task_us) + ' of tasks' : '';
      document.title = 'opscope inspector · ' + ((g.model && g.model.path) || 'run').split('/').pop();
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
      } else if (sel.kind === 'task') {
        marks.tasks[SEL].add(sel.task.index);
        markTasks(m.tasksById.get(sel.task.task_id) || [], HI);  // the same task in other iterations
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
      const marks = this.marksFor(sel);
      for (const layer of ['framework', 'compiled']) this.graphs[layer].setMarks(...marks[layer]);
      this.timeline.setMarks(...marks.tasks);
      for (const tr of document.querySelectorAll('#optype-table tr.optype')) {
        tr.classList.toggle('selected', !!sel && sel.kind === 'optype' && tr.dataset.opType === sel.opType);
      }
      opscope.renderDetails(document.getElementById('details'), this.model, sel, sel || {});
      if (!reveal || !sel) return;
      // Bring the counterparts into view where they are off screen.
      for (const layer of ['framework', 'compiled']) {
        const first = [...marks[layer][0], ...marks[layer][1]][0];
        if (first !== undefined && !(sel.kind === 'node' && sel.node.layer === layer)) this.graphs[layer].reveal(first);
      }
      const firstTask = [...marks.tasks[0], ...marks.tasks[1]][0];
      if (firstTask !== undefined && sel.kind !== 'task') this.timeline.reveal(this.model.tasks[firstTask]);
    }

    attachLinks() {
      document.getElementById('details').addEventListener('click', (ev) => {
        const a = ev.target.closest('a[data-link]');
        if (!a) return;
        ev.preventDefault();
        if (a.dataset.link === 'task') {
          this.select({kind: 'task', task: this.model.tasks[+a.dataset.taskIndex]});
        } else {
          const node = this.model.layers[a.dataset.layer].byId.get(+a.dataset.nodeId);
          this.select({kind: 'node', node});
          this.graphs[node.layer].centerOn(node.node_id);
        }
      });
      document.getElementById('optypes').addEventListener('click', (ev) => {
        const tr = ev.target.closest('tr.optype');
        if (!tr) return;
        const same = this.selection && this.selection.kind === 'optype' && this.selection.opType === tr.dataset.opType;
        this.select(same ? null : {kind: 'optype', opType: tr.dataset.opType});
      });
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
