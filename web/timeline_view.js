'use strict';
// timeline_view.js: the tasks of trace.json, one lane per stream (the copy
// stream included), on a time axis whose unit follows the zoom. The same for
// ops-debug's timeline.json: one lane per process and thread, events nested
// in a thread (an api span and its phases) on sub-rows by depth, launches
// drawn as arrows from the api span to its kernel. A diagnosis's trajectory
// too: instant events (syncs, copies) as diamonds on their stream, the
// failing launch in red with a cross, one that never finished hatched.
//
// One canvas, redrawn at most once per animation frame, draws only the time
// window in view: a sub-row's tasks are found by binary search
// (timeline_index.js), and those narrower than a pixel share one column per
// pixel, so a million tasks cost what the screen's width costs. Input
// (timeline_input.js) and the test hook (timeline_hook.js) work on the same
// geometry as the drawing.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const AXIS_H = 26, RIGHT_PAD = 16, LANE_PAD = 5, SUB_GAP = 2, MAX_BAR_H = 46, MIN_SPAN_US = 1e-3;
  const FONT = '11px system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif';
  const BOLD = '600 11px system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif';
  const UNITS = [['s', 1e6], ['ms', 1e3], ['µs', 1], ['ns', 1e-3]];
  const FAILING = '#c92a2a', SELECTED = '#d9480f', HIGHLIGHTED = '#f08c00';

  // A round step for about `target` ticks over `span` µs.
  function tickStep(span, target) {
    const raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }
  // The largest unit a tick step is at least one of.
  opscope.axisUnit = (step) => UNITS.find(([, us]) => step >= us * 0.999) || UNITS[UNITS.length - 1];

  function hatch(colour) {
    const c = document.createElement('canvas');
    c.width = c.height = 8;
    const g = c.getContext('2d');
    g.fillStyle = colour;
    g.fillRect(0, 0, 8, 8);
    g.strokeStyle = 'rgba(255,255,255,0.45)';
    g.lineWidth = 3;
    g.beginPath();
    for (const o of [-8, 0, 8]) {
      g.moveTo(o, 8);
      g.lineTo(o + 8, 0);
    }
    g.stroke();
    return c;
  }

  class TimelineView {
    // opts: {legend (element), search, searchStatus (elements), onRange([t0, t1] | null), diagnosis (bool)}
    constructor(host, model, tooltip, onSelect, opts = {}) {
      this.host = host;
      this.model = model;
      this.tooltip = tooltip;
      this.onSelect = onSelect;
      this.opts = opts;
      this.selected = new Set();
      this.highlighted = new Set();
      this.rangeSel = null;
      this.frame = 0;
      this.last = null;
      this.dim = opts.diagnosis ? 0.6 : 0.35;
      // Room for the longest lane name ("host / host thread 1"), within bounds.
      this.labelW = Math.min(220, Math.max(110, 20 + 7 * Math.max(0, ...model.lanes.map((l) => l.name.length))));
      this.alwaysFlows = model.flows.filter((f) => f.cat !== 'dependency');
      this.shownFlows = this.alwaysFlows;
      this.canvas = document.createElement('canvas');
      this.canvas.className = 'timeline';
      this.spacer = document.createElement('div');
      host.replaceChildren(this.canvas, this.spacer);
      this.ctx = this.canvas.getContext('2d');
      this.hatches = {unfinished: this.ctx.createPattern(hatch('#e8590c'), 'repeat'),
        failing: this.ctx.createPattern(hatch(FAILING), 'repeat')};
      this.modes = opscope.colourModes(model);
      this.setColourMode(this.modes[0]);
      this.fit();
      opscope.attachTimelineInput(this);
    }

    setColourMode(mode) {
      this.colours = opscope.timelineColours(this.model, mode);
      if (this.opts.legend) opscope.renderTimelineLegend(this.opts.legend, this, (m) => this.setColourMode(m));
      this.requestDraw();
    }

    fit() {
      const [t0, t1] = this.model.timeRange, pad = Math.max((t1 - t0) * 0.01, 0.001);
      this.range = [t0 - pad, t1 + pad];
      this.requestDraw();
    }
    setRange(a, b) {
      const full = this.model.timeRange, most = Math.max(MIN_SPAN_US, 2 * (full[1] - full[0]));
      let span = Math.min(most, Math.max(MIN_SPAN_US, b - a));
      const mid = (a + b) / 2;
      this.range = [mid - span / 2, mid + span / 2];
      this.requestDraw();
    }

    requestDraw() {
      if (this.pending) return;
      this.pending = true;
      requestAnimationFrame(() => this.draw());
    }

    // The pane's size, read once per frame: layout reads are not free.
    measure() {
      const w = Math.max(200, this.host.clientWidth || 800), h = Math.max(60, this.host.clientHeight || 200);
      this.size = {w, h, plotW: Math.max(100, w - this.labelW - RIGHT_PAD)};
      this.layout();
    }
    plotWidth() {
      return this.size.plotW;
    }
    x(t) {
      const [a, b] = this.range;
      return this.labelW + ((t - a) / (b - a)) * this.size.plotW;
    }
    timeAt(px) {
      const [a, b] = this.range;
      return a + ((px - this.labelW) / this.size.plotW) * (b - a);
    }

    // Each lane is one sub-row per nesting depth. The lanes share the pane's
    // height; bars stay readable (no taller than MAX_BAR_H), centred in their lane.
    layout() {
      const lanes = this.model.lanes, rows = lanes.reduce((n, l) => n + l.depth, 0);
      const room = this.size.h - AXIS_H - 2 * LANE_PAD * lanes.length;
      this.subH = Math.round(Math.min(MAX_BAR_H, Math.max(20, room / Math.max(1, rows))));
      const used = AXIS_H + lanes.reduce((n, l) => n + 2 * LANE_PAD + l.depth * this.subH, 0);
      const extra = Math.max(0, this.size.h - used);
      let y = AXIS_H;
      for (const l of lanes) {
        l.y = y;
        l.h = 2 * LANE_PAD + l.depth * this.subH + Math.floor((extra * l.depth) / Math.max(1, rows));
        l.barTop = l.y + (l.h - l.depth * this.subH) / 2;
        y += l.h;
      }
      this.contentH = y;
    }
    barY(lane, depth) {
      return lane.barTop + depth * this.subH;
    }
    barH(lane) {
      return lane.depth > 1 ? this.subH - SUB_GAP : this.subH;
    }
    top() {
      return this.host.scrollTop;
    }

    // The box a task is drawn in, in canvas pixels (x unclipped).
    box(t) {
      const y = this.barY(t.lane, t.depth) - this.top(), h = this.barH(t.lane), x0 = this.x(t.ts);
      if (t.instant) {
        const r = Math.min(7, h / 2 - 2);
        return {x0: x0 - r, x1: x0 + r, y0: y + h / 2 - r, y1: y + h / 2 + r};
      }
      const w = Math.max(t.failing ? 8 : 1, this.x(t.ts + t.dur) - x0);
      return {x0, x1: x0 + w, y0: y, y1: y + h};
    }
    fillOf(t) {
      if (t.failing) return t.unfinished ? this.hatches.failing : FAILING;
      if (t.unfinished) return this.hatches.unfinished;
      return this.colours.colourOf(t.index);
    }

    draw() {
      this.pending = false;
      const began = performance.now();
      this.measure();
      const {w, h} = this.size, dpr = window.devicePixelRatio || 1, c = this.canvas;
      if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
        c.width = Math.round(w * dpr);
        c.height = Math.round(h * dpr);
        c.style.width = w + 'px';
        c.style.height = h + 'px';
      }
      this.spacer.style.height = Math.max(0, this.contentH - h) + 'px';
      const ctx = this.ctx, top = this.top();
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, w, h);
      this.model.lanes.forEach((lane, i) => {
        ctx.fillStyle = i % 2 ? '#ffffff' : '#fafbfc';
        ctx.fillRect(0, lane.y - top, w, lane.h);
        ctx.fillStyle = '#eef0f3';
        ctx.fillRect(0, lane.y + lane.h - top - 1, w, 1);
      });
      const ticks = this.ticks();
      ctx.save();
      ctx.beginPath();
      ctx.rect(this.labelW, AXIS_H, this.size.plotW, h - AXIS_H);
      ctx.clip();
      ctx.fillStyle = '#eef0f3';
      for (const t of ticks.values) ctx.fillRect(Math.round(this.x(t)), AXIS_H, 1, h - AXIS_H);
      const stats = {frame: ++this.frame, tasks: 0, bars: 0, columns: 0, labels: 0};
      const marked = this.selected.size + this.highlighted.size > 0;
      ctx.globalAlpha = marked ? this.dim : 1;
      for (const row of this.model.index.rows) {
        const y = this.barY(row.lane, row.depth) - top;
        if (y > h || y + this.subH < AXIS_H) continue;
        this.drawRow(ctx, row, y, stats);
      }
      ctx.globalAlpha = 1;
      if (marked) this.drawMarked(ctx);
      stats.flows = this.drawFlows(ctx);
      this.drawRangeSel(ctx);
      ctx.restore();
      this.drawLabels(ctx);
      this.drawAxis(ctx, ticks);
      stats.axis = {unit: ticks.unit, labels: ticks.labels};
      stats.drawMs = performance.now() - began;
      if (this.firstDrawAt === undefined) this.firstDrawAt = performance.now();
      this.last = stats;
      this.canvas.dataset.frame = String(stats.frame);
    }

    drawRow(ctx, row, y, stats) {
      const [a, b] = this.range, tasks = this.model.tasks, h = this.barH(row.lane);
      const [first, last] = row.window(a, b);
      const usPerPx = (b - a) / this.size.plotW;
      let run = null;  // adjacent pixel columns of one colour, filled as one rect
      const flush = () => {
        if (!run) return;
        ctx.fillStyle = run.fill;
        ctx.fillRect(run.x0, y, run.x1 - run.x0, h);
        run = null;
      };
      for (let i = first; i < last;) {
        const t = tasks[row.idx[i]], x0 = this.x(row.starts[i]), x1 = this.x(row.ends[i]);
        if (t.instant || t.failing || t.unfinished || x1 - x0 >= 1) {
          flush();
          this.drawTask(ctx, t, stats);
          stats.tasks++;
          stats.bars++;
          ++i;
          continue;
        }
        // Narrower than a pixel: the tasks that start in this pixel column share it.
        const px = Math.floor(x0), colEnd = a + (px + 1 - this.labelW) * usPerPx;
        let j = row.startsAfter(colEnd, i + 1, last);
        if (j - 1 > i && this.x(row.ends[j - 1]) - this.x(row.starts[j - 1]) >= 1) --j;  // a wide one is drawn as itself
        const fill = this.colours.colourOf(row.idx[(i + j - 1) >> 1]);
        if (run && run.fill === fill && run.x1 >= px) run.x1 = px + 1;
        else {
          flush();
          run = {fill, x0: px, x1: px + 1};
        }
        stats.tasks += j - i;
        stats.columns++;
        i = j;
      }
      flush();
    }

    drawTask(ctx, t, stats, mark) {
      const bx = this.box(t);
      ctx.fillStyle = this.fillOf(t);
      if (t.instant) {
        const cx = (bx.x0 + bx.x1) / 2, cy = (bx.y0 + bx.y1) / 2, r = (bx.x1 - bx.x0) / 2;
        ctx.beginPath();
        ctx.moveTo(cx, cy - r);
        ctx.lineTo(cx + r, cy);
        ctx.lineTo(cx, cy + r);
        ctx.lineTo(cx - r, cy);
        ctx.closePath();
        if (mark === 'selected') ctx.fillStyle = SELECTED;
        ctx.fill();
        ctx.strokeStyle = mark === 'selected' ? '#000' : '#ffffff';
        ctx.lineWidth = 1;
        ctx.stroke();
        return;
      }
      const w = bx.x1 - bx.x0, h = bx.y1 - bx.y0;
      ctx.beginPath();
      if (w >= 6) ctx.roundRect(bx.x0, bx.y0, w, h, 3);
      else ctx.rect(bx.x0, bx.y0, w, h);
      ctx.fill();
      if (mark || t.failing || w >= 4) {
        ctx.strokeStyle = mark === 'selected' ? (t.failing ? '#1f2328' : SELECTED) : mark === 'highlighted' ? HIGHLIGHTED
          : t.failing ? '#7d1414' : 'rgba(0,0,0,0.25)';
        ctx.lineWidth = mark === 'selected' ? 3.5 : mark === 'highlighted' ? 3 : t.failing ? 2 : 0.5;
        ctx.stroke();
      }
      if (t.failing) {
        // A cross on the bar's left end: the mark that survives any colour scheme or zoom.
        const c = Math.min(h / 2 - 3, 6), cx = bx.x0 + Math.min(w / 2, c + 4), cy = bx.y0 + h / 2;
        ctx.beginPath();
        ctx.moveTo(cx - c, cy - c);
        ctx.lineTo(cx + c, cy + c);
        ctx.moveTo(cx + c, cy - c);
        ctx.lineTo(cx - c, cy + c);
        ctx.strokeStyle = '#ffffff';
        ctx.lineWidth = 2.5;
        ctx.lineCap = 'round';
        ctx.stroke();
        ctx.lineCap = 'butt';
      }
      this.drawName(ctx, t, bx, stats);
    }

    // The op type, then the node's name, on the part of the bar in view.
    drawName(ctx, t, bx, stats) {
      const inset = t.failing ? 18 : 4;
      const v0 = Math.max(bx.x0, this.labelW), v1 = Math.min(bx.x1, this.labelW + this.size.plotW);
      if (v1 - v0 < 24 + inset) return;
      const state = t.failing ? (t.unfinished ? ' · failing, never finished' : ' · failing') : t.unfinished ? ' · never finished' : '';
      const room = v1 - v0 - inset - 4, y = (bx.y0 + bx.y1) / 2 + 4;
      ctx.fillStyle = t.failing || t.unfinished ? '#ffffff' : opscope.inkOn(this.fillOf(t));
      ctx.font = BOLD;
      const head = fitText(ctx, t.op_type + state, room);
      ctx.fillText(head, v0 + inset, y);
      const used = ctx.measureText(head).width;
      if (t.name && t.name !== t.op_type && head === t.op_type + state && room - used > 30) {
        ctx.font = FONT;
        ctx.fillText(fitText(ctx, t.name, room - used - 6), v0 + inset + used + 6, y);
      }
      if (stats) stats.labels++;
    }

    // The selected and highlighted tasks, over the dimmed rest, each at least visible.
    drawMarked(ctx) {
      const [a, b] = this.range, tasks = this.model.tasks;
      for (const [set, mark] of [[this.highlighted, 'highlighted'], [this.selected, 'selected']]) {
        for (const i of set) {
          if (mark === 'highlighted' && this.selected.has(i)) continue;
          const t = tasks[i];
          if (t.ts > b || t.ts + t.dur < a) continue;
          this.drawTask(ctx, t, null, mark);
        }
      }
    }

    // Where a flow is drawn: a dependency from its producer's end to its
    // consumer's start; a launch from the call's moment to its kernel.
    flowGeometry(f) {
      const tasks = this.model.tasks, top = this.top();
      const dep = f.cat === 'dependency';
      const from = f.fromTask >= 0 ? tasks[f.fromTask] : null, to = f.toTask >= 0 ? tasks[f.toTask] : null;
      const x1 = dep && from ? this.box(from).x1 : this.x(f.fromTs), x2 = dep && to ? this.x(to.ts) : this.x(f.toTs);
      const y1 = this.barY(f.from, f.fromDepth) + this.barH(f.from) / 2 - top, y2 = this.barY(f.to, f.toDepth) + this.barH(f.to) / 2 - top;
      return {x1, y1, x2, y2};
    }

    drawFlows(ctx) {
      const drawn = [], right = this.labelW + this.size.plotW;
      for (const f of this.shownFlows) {
        const g = this.flowGeometry(f);
        if (Math.max(g.x1, g.x2) < this.labelW || Math.min(g.x1, g.x2) > right) continue;
        const dep = f.cat === 'dependency', mx = (g.x1 + g.x2) / 2;
        ctx.beginPath();
        ctx.moveTo(g.x1, g.y1);
        ctx.bezierCurveTo(mx, g.y1, mx, g.y2, g.x2, g.y2);
        ctx.strokeStyle = dep ? '#343a40' : '#868e96';
        ctx.lineWidth = dep ? 1.5 : 1;
        ctx.setLineDash(dep ? [] : [3, 2]);
        ctx.stroke();
        ctx.setLineDash([]);
        // The head points along the curve's last tangent (horizontal).
        const dir = g.x2 >= mx ? 1 : -1;
        ctx.beginPath();
        ctx.moveTo(g.x2, g.y2);
        ctx.lineTo(g.x2 - dir * 7, g.y2 - 4);
        ctx.lineTo(g.x2 - dir * 7, g.y2 + 4);
        ctx.closePath();
        ctx.fillStyle = ctx.strokeStyle;
        ctx.fill();
        drawn.push({index: f.index, cat: f.cat, fromTask: f.fromTask, toTask: f.toTask, ...g});
      }
      return drawn;
    }

    drawRangeSel(ctx) {
      if (!this.rangeSel) return;
      const x0 = this.x(this.rangeSel[0]), x1 = this.x(this.rangeSel[1]);
      ctx.fillStyle = 'rgba(28,126,214,0.13)';
      ctx.fillRect(x0, AXIS_H, x1 - x0, this.size.h - AXIS_H);
      ctx.fillStyle = '#1c7ed6';
      ctx.fillRect(Math.round(x0), AXIS_H, 1, this.size.h - AXIS_H);
      ctx.fillRect(Math.round(x1), AXIS_H, 1, this.size.h - AXIS_H);
    }

    drawLabels(ctx) {
      const top = this.top();
      ctx.font = BOLD;
      this.model.lanes.forEach((lane, i) => {
        ctx.fillStyle = i % 2 ? '#ffffff' : '#fafbfc';
        ctx.fillRect(0, lane.y - top, this.labelW - 2, lane.h - 1);
        ctx.fillStyle = '#343a40';
        ctx.fillText(fitText(ctx, lane.name, this.labelW - 14), 10, this.barY(lane, 0) + this.subH / 2 + 4 - top);
      });
    }

    ticks() {
      const [a, b] = this.range, step = tickStep(b - a, Math.max(2, this.size.plotW / 120));
      const [unit, us] = opscope.axisUnit(step);
      const digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / us) - 1e-9)));
      const values = [], labels = [];
      for (let k = Math.ceil(a / step); k * step <= b; ++k) {
        values.push(k * step);
        labels.push((k * step / us).toFixed(digits) + ' ' + unit);
      }
      return {unit, step, values, labels};
    }

    drawAxis(ctx, ticks) {
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, this.size.w, AXIS_H);
      ctx.fillStyle = '#d8dde3';
      ctx.fillRect(0, AXIS_H - 1, this.size.w, 1);
      ctx.font = FONT;
      ctx.fillStyle = '#6a737d';
      ticks.values.forEach((t, i) => {
        const x = this.x(t);
        ctx.fillRect(Math.round(x), AXIS_H - 6, 1, 6);
        ctx.fillText(ticks.labels[i], x + 3, AXIS_H - 10);
      });
      if (this.rangeSel) {
        const [t0, t1] = this.rangeSel, x0 = Math.max(this.labelW, this.x(t0));
        const text = 'range ' + opscope.formatUs(t1 - t0);
        ctx.fillStyle = '#1c7ed6';
        ctx.fillRect(x0, 2, ctx.measureText(text).width + 8, 14);
        ctx.fillStyle = '#ffffff';
        ctx.fillText(text, x0 + 4, 13);
      }
    }

    // selected / highlighted: Sets of task indexes. Only the selected tasks'
    // dependencies are drawn: all of a big run's would hide its bars.
    setMarks(selected, highlighted) {
      this.selected = selected;
      this.highlighted = highlighted;
      const deps = [];
      for (const i of selected) for (const f of this.model.flowsOfTask.get(i) || []) if (f.cat === 'dependency') deps.push(f);
      this.shownFlows = [...this.alwaysFlows, ...new Set(deps)];
      this.requestDraw();
    }

    setRangeSel(r) {
      this.rangeSel = r;
      this.requestDraw();
    }

    // Pans so the task is in view, keeping the zoom, and scrolls its lane into the pane.
    reveal(task, {zoom = false} = {}) {
      if (!this.size) this.measure();
      let [a, b] = this.range;
      // A found task narrower than a few pixels is zoomed to, or it could not be seen.
      if (zoom && ((task.dur || 0) / (b - a)) * this.size.plotW < 4) {
        const span = Math.max(MIN_SPAN_US * 10, (task.dur || 1) * 20);
        [a, b] = [task.ts - span / 2, task.ts + span / 2];
      }
      if (task.ts < a || task.ts + task.dur > b) {
        const span = b - a, mid = task.ts + task.dur / 2;
        [a, b] = [mid - span / 2, mid + span / 2];
      }
      this.range = [a, b];
      this.layout();
      const top = task.lane.y, bottom = task.lane.y + task.lane.h;
      if (top - AXIS_H < this.host.scrollTop || bottom > this.host.scrollTop + this.host.clientHeight) {
        this.host.scrollTop = Math.max(0, top - AXIS_H);
      }
      this.requestDraw();
    }

    // The task drawn under a canvas point, within a few pixels: -1 if none.
    hitTest(px, py) {
      const top = this.top();
      if (px < this.labelW || py < AXIS_H) return -1;
      const lane = this.model.lanes.find((l) => py + top >= l.y && py + top < l.y + l.h);
      if (!lane) return -1;
      const depth = Math.max(0, Math.min(lane.depth - 1, Math.floor((py + top - lane.barTop) / this.subH)));
      const TOL = 3;
      let best = -1, bestD = Infinity;
      const consider = (row) => {
        const [first, last] = row.window(this.timeAt(px - TOL), this.timeAt(px + TOL));
        // Where a column holds many, the search has already narrowed it to them.
        const lo = last - first > 64 ? Math.max(first, row.startsAfter(this.timeAt(px), first, last) - 32) : first;
        for (let i = lo; i < Math.min(last, lo + 64); ++i) {
          const t = this.model.tasks[row.idx[i]], bx = this.box(t);
          const dx = px < bx.x0 ? bx.x0 - px : px > bx.x1 ? px - bx.x1 : 0;
          // Inside two boxes, the nearer centre wins: a click on a thin bar's middle picks it.
          const d = dx > 0 ? dx + 1 : Math.abs(px - (bx.x0 + bx.x1) / 2) / Math.max(1, bx.x1 - bx.x0);
          if (dx <= TOL && d < bestD) {
            best = t.index;
            bestD = d;
          }
        }
      };
      consider(lane.rows[depth]);
      if (best < 0 && depth > 0) consider(lane.rows[0]);  // the instants sit on the first row
      return best;
    }

    // Page (client) coordinates of the canvas's corner.
    clientOrigin() {
      const r = this.canvas.getBoundingClientRect();
      return [r.left, r.top];
    }
    taskAtPoint(clientX, clientY) {
      const [ox, oy] = this.clientOrigin();
      return this.hitTest(clientX - ox, clientY - oy);
    }
  }
  TimelineView.AXIS_H = AXIS_H;

  // The longest head of `text` that fits `room` pixels, with an ellipsis.
  function fitText(ctx, text, room) {
    if (ctx.measureText(text).width <= room) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= room) lo = mid;
      else hi = mid - 1;
    }
    return lo ? text.slice(0, lo) + '…' : '';
  }

  opscope.TimelineView = TimelineView;
})();
