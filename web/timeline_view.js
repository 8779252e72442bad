'use strict';
// timeline_view.js: the tasks of trace.json, one lane per stream (the copy
// stream included), on a time axis in µs; event waits drawn as arrows. The
// same for ops-debug's timeline.json: one lane per process and thread, events
// nested in a thread (an api span and its phases) on sub-rows by depth, and
// launches drawn as arrows from the api span to its kernel. A diagnosis's
// trajectory too: instant events (syncs, copies) as diamonds on their stream,
// the failing launch in red with a cross, one that never finished hatched.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const AXIS_H = 26, RIGHT_PAD = 16, LANE_PAD = 5, SUB_GAP = 2;
  let LABEL_W = 110, SUB_H = 24;

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  // A round step for about `target` ticks over `span` µs.
  function tickStep(span, target) {
    const raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }

  class TimelineView {
    constructor(host, model, tooltip, onSelect) {
      this.host = host;
      this.model = model;
      this.tooltip = tooltip;
      this.onSelect = onSelect;
      this.selected = new Set();
      this.highlighted = new Set();
      // Room for the longest lane name ("host / host thread 1"), within bounds.
      LABEL_W = Math.min(220, Math.max(110, 20 + 7 * Math.max(0, ...model.lanes.map((l) => l.name.length))));
      this.fit();
      this.attachEvents();
    }

    fit() {
      const [t0, t1] = this.model.timeRange, pad = Math.max((t1 - t0) * 0.01, 0.001);
      this.range = [t0 - pad, t1 + pad];
      this.render();
    }

    plotWidth() {
      return Math.max(100, (this.host.clientWidth || 800) - LABEL_W - RIGHT_PAD);
    }
    x(t) {
      const [a, b] = this.range;
      return LABEL_W + ((t - a) / (b - a)) * this.plotWidth();
    }
    timeAt(px) {
      const [a, b] = this.range;
      return a + ((px - LABEL_W) / this.plotWidth()) * (b - a);
    }

    // Each lane is one sub-row per nesting depth; the lanes share the pane's
    // height, within readable bounds.
    layout() {
      const lanes = this.model.lanes, rows = lanes.reduce((n, l) => n + l.depth, 0);
      const room = (this.host.clientHeight || 200) - AXIS_H - 10 - 2 * LANE_PAD * lanes.length;
      SUB_H = Math.round(Math.min(46, Math.max(20, room / Math.max(1, rows))));
      let y = AXIS_H;
      for (const l of lanes) {
        l.y = y;
        l.h = 2 * LANE_PAD + l.depth * SUB_H;
        y += l.h;
      }
      return y;
    }
    barY(lane, depth) {
      return lane.y + LANE_PAD + depth * SUB_H;
    }
    barH(lane) {
      return lane.depth > 1 ? SUB_H - SUB_GAP : SUB_H;
    }

    render() {
      const lanes = this.model.lanes, width = LABEL_W + this.plotWidth() + RIGHT_PAD;
      const height = this.layout() + 8;
      const svg = el('svg', {class: 'timeline', width, height});
      el('clipPath', {id: 'plot-clip'}, svg).appendChild(el('rect', {x: LABEL_W, y: 0, width: this.plotWidth(), height}));
      // Stripes for a span whose end was never recorded (style.css fills with them).
      for (const [id, colour] of [['hatch-unfinished', '#e8590c'], ['hatch-failing', '#c92a2a']]) {
        const p = el('pattern', {id, width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)'}, svg);
        el('rect', {width: 8, height: 8, fill: colour}, p);
        el('line', {x1: 2, y1: 0, x2: 2, y2: 8, stroke: '#ffffff', 'stroke-width': 3, 'stroke-opacity': 0.45}, p);
      }
      this.drawAxis(svg, height);
      const plot = el('g', {'clip-path': 'url(#plot-clip)'});
      for (const lane of lanes) {
        const g = el('g', {class: 'lane', 'data-stream-id': lane.tid, 'data-lane': lane.key, 'data-depth': lane.depth}, svg);
        el('rect', {class: 'lane-bg', x: 0, y: lane.y, width, height: lane.h}, g);
        el('text', {class: 'lane-label', x: 10, y: this.barY(lane, 0) + SUB_H / 2 + 4}, g).textContent = lane.name;
      }
      svg.appendChild(plot);
      for (const t of this.model.tasks) this.drawTask(plot, t);
      this.drawFlows(plot);
      this.svg = svg;
      this.host.replaceChildren(svg);
      this.applyMarks();
    }

    drawAxis(svg, height) {
      const [a, b] = this.range, step = tickStep(b - a, Math.max(2, this.plotWidth() / 110));
      const g = el('g', {class: 'axis'}, svg);
      for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
        const x = this.x(t);
        el('line', {x1: x, x2: x, y1: AXIS_H - 6, y2: height, class: 'tick'}, g);
        const digits = step >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(step)));
        el('text', {x: x + 3, y: AXIS_H - 10}, g).textContent = t.toFixed(digits) + ' µs';
      }
    }

    // Every task gets its bar whatever the zoom; the clip hides those out of range.
    drawTask(parent, t) {
      const x0 = this.x(t.ts), x1 = this.x(t.ts + t.dur);
      // The failing launch stays wide enough to see and click at any zoom.
      const y = this.barY(t.lane, t.depth), h = this.barH(t.lane), w = Math.max(t.failing ? 8 : 1.5, x1 - x0);
      // Without a graph no event has a node, and that says nothing about it.
      const noNode = this.model.hasGraph && t.node_id < 0;
      const marks = (noNode ? ' no-node' : '') + (t.failing ? ' failing' : '') + (t.unfinished ? ' unfinished' : '') +
        (t.instant ? ' instant' : '');
      const g = el('g', {class: 'task cat-' + t.cat + marks, 'data-task-id': t.task_id,
        'data-task-index': t.index, 'data-node-id': t.node_id, 'data-stream-id': t.lane.tid,
        'data-op-type': opscope.opTypeRowOf(t), 'data-depth': t.depth, 'data-seq': t.args.seq}, parent);
      if (t.instant) {
        const r = Math.min(7, h / 2 - 2), cy = y + h / 2;
        el('path', {d: `M${x0},${cy - r} L${x0 + r},${cy} L${x0},${cy + r} L${x0 - r},${cy} Z`}, g);
        return;
      }
      el('rect', {x: x0, y, width: w, height: h, rx: 3, fill: t.node_id >= 0 ? opscope.scopeColour(this.namespaceOf(t)) : null}, g);
      if (t.failing) {
        // A cross on the bar's left end: the mark that survives any colour scheme or zoom.
        const c = Math.min(h / 2 - 3, 6), cx = x0 + Math.min(w / 2, c + 4), cy = y + h / 2;
        el('path', {class: 'failing-cross', d: `M${cx - c},${cy - c} L${cx + c},${cy + c} M${cx + c},${cy - c} L${cx - c},${cy + c}`}, g);
      }
      // The label goes on the part in view, so a zoomed-in span keeps its name.
      const inset = t.failing ? 18 : 4;
      const v0 = Math.max(x0, LABEL_W), v1 = Math.min(x0 + w, LABEL_W + this.plotWidth());
      if (v1 - v0 > 32 + inset) {
        const text = t.op_type + (t.failing ? (t.unfinished ? ' · failing, never finished' : ' · failing')
          : t.unfinished ? ' · never finished' : '');
        const chars = Math.floor((v1 - v0 - inset - 4) / 6.5);
        const label = text.length <= chars ? text : text.slice(0, Math.max(1, chars - 1)) + '…';
        el('text', {x: v0 + inset, y: y + h / 2 + 4}, g).textContent = label;
      }
    }

    namespaceOf(t) {
      const n = opscope.nodeOfTask(this.model, t);
      return n ? n.namespace : '';
    }

    drawFlows(parent) {
      const g = el('g', {class: 'flows'}, parent);
      for (const f of this.model.flows) {
        const x1 = this.x(f.fromTs), x2 = this.x(f.toTs);
        const y1 = this.barY(f.from, f.fromDepth) + this.barH(f.from) / 2, y2 = this.barY(f.to, f.toDepth) + this.barH(f.to) / 2;
        const path = el('path', {class: 'flow', d: `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`}, g);
        el('title', {}, path).textContent = f.name;
      }
    }

    // selected / highlighted: Sets of task indexes.
    setMarks(selected, highlighted) {
      this.selected = selected;
      this.highlighted = highlighted;
      this.applyMarks();
    }
    applyMarks() {
      for (const g of this.svg.querySelectorAll('g.task')) {
        const i = +g.dataset.taskIndex;
        g.classList.toggle('selected', this.selected.has(i));
        g.classList.toggle('highlighted', !this.selected.has(i) && this.highlighted.has(i));
      }
      this.svg.classList.toggle('has-marks', this.selected.size + this.highlighted.size > 0);
    }

    // Pans so the task is in view, keeping the zoom, and scrolls its lane into the pane.
    reveal(task) {
      const [a, b] = this.range;
      if (task.ts < a || task.ts + task.dur > b) {
        const span = b - a, mid = task.ts + task.dur / 2;
        this.range = [mid - span / 2, mid + span / 2];
        this.render();
      }
      const top = task.lane.y, bottom = task.lane.y + task.lane.h;
      if (top < this.host.scrollTop || bottom > this.host.scrollTop + this.host.clientHeight) {
        this.host.scrollTop = Math.max(0, top - AXIS_H);
      }
    }

    showTooltip(ev, t) {
      const node = opscope.nodeOfTask(this.model, t);
      this.tooltip.replaceChildren();
      const a = t.args;
      const rows = [t.task_id !== undefined ? ['task', `#${t.task_id}  ${t.name}`] : ['event', `${t.name} (${t.cat || 'no category'})`],
        a.op_type !== undefined ? ['op type', t.op_type] : a.op !== undefined && ['op', a.op], ['kernel', t.kernel || '–'],
        typeof a.state === 'string' && ['state', a.state + (t.failing ? ' · the failing launch' : '')],
        t.instant ? ['at', opscope.formatUs(t.ts)] : ['duration', opscope.formatUs(t.dur) + (t.unfinished ? ' or more' : '')],
        !t.instant && ['start', opscope.formatUs(t.ts)], ['stream', t.lane.name],
        this.model.hasGraph && ['node', node ? `${node.name} (node ${node.node_id})` : 'none: inserted by the compiler (' + t.cat + ')'],
        typeof a.bound === 'string' && ['bound', a.bound],
        opscope.hasEfficiency(a) && ['efficiency', opscope.formatEfficiency(a.efficiency)]];
      for (const [k, v] of rows.filter(Boolean)) {
        const row = document.createElement('div');
        const key = document.createElement('span');
        key.className = 'key';
        key.textContent = k;
        row.append(key, document.createTextNode(v));
        this.tooltip.appendChild(row);
      }
      this.tooltip.hidden = false;
      const pad = 14, w = this.tooltip.offsetWidth, h = this.tooltip.offsetHeight;
      const left = Math.min(ev.clientX + pad, window.innerWidth - w - 4);
      const top = ev.clientY + pad + h > window.innerHeight ? ev.clientY - h - pad : ev.clientY + pad;
      this.tooltip.style.left = left + 'px';
      this.tooltip.style.top = top + 'px';
    }

    attachEvents() {
      let drag = null, lastPanEnd = -1e9;
      const taskOf = (target) => {
        const g = target.closest && target.closest('g.task');
        return g ? this.model.tasks[+g.dataset.taskIndex] : null;
      };
      this.host.addEventListener('mousemove', (ev) => {
        const t = drag && drag.moved ? null : taskOf(ev.target);
        if (t) this.showTooltip(ev, t);
        else this.tooltip.hidden = true;
      });
      this.host.addEventListener('mouseleave', () => (this.tooltip.hidden = true));
      this.host.addEventListener('wheel', (ev) => {
        ev.preventDefault();
        const r = this.host.getBoundingClientRect(), px = ev.clientX - r.left;
        const at = this.timeAt(Math.max(LABEL_W, px)), k = Math.exp(ev.deltaY * 0.0015);
        const [a, b] = this.range, span = Math.max(1e-3, (b - a) * k);
        const f = (at - a) / (b - a);
        this.range = [at - f * span, at + (1 - f) * span];
        this.render();
      }, {passive: false});
      this.host.addEventListener('pointerdown', (ev) => {
        if (ev.button === 0) drag = {x: ev.clientX, range: this.range.slice(), moved: false};
      });
      window.addEventListener('pointermove', (ev) => {
        if (!drag) return;
        const dx = ev.clientX - drag.x;
        if (!drag.moved && Math.abs(dx) < 4) return;
        drag.moved = true;
        const dt = (dx / this.plotWidth()) * (drag.range[1] - drag.range[0]);
        this.range = [drag.range[0] - dt, drag.range[1] - dt];
        this.render();
      });
      window.addEventListener('pointerup', () => {
        if (drag && drag.moved) lastPanEnd = performance.now();
        drag = null;
      });
      this.host.addEventListener('click', (ev) => {
        if (performance.now() - lastPanEnd < 250) return;  // the end of a pan, not a click
        this.onSelect(taskOf(ev.target));
      });
      this.host.addEventListener('dblclick', () => this.fit());
      window.addEventListener('resize', () => this.render());
    }
  }

  opscope.TimelineView = TimelineView;
})();
