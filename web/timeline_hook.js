'use strict';
// timeline_hook.js: what the timeline's last frame shows, for tests. A canvas
// has no element per task, so a test asks the view: where a task is drawn (in
// the page's client coordinates, as a mouse event gives them), which marks it
// carries, which lanes, arrows and axis labels the frame drew.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const AXIS_H = opscope.TimelineView.AXIS_H;
  Object.assign(opscope.TimelineView.prototype, {
    taskBox(index) {
      const t = this.model.tasks[index];
      if (!this.size || !t) return null;
      const bx = this.box(t), right = this.labelW + this.size.plotW;
      if (bx.x1 < this.labelW || bx.x0 > right || bx.y1 < AXIS_H || bx.y0 > this.size.h) return null;
      const [ox, oy] = this.clientOrigin();
      return {x0: ox + Math.max(bx.x0, this.labelW), x1: ox + Math.min(bx.x1, right), y0: oy + bx.y0, y1: oy + bx.y1};
    },
    classesOf(t) {
      const noNode = this.model.hasGraph && t.node_id < 0;
      return ['cat-' + t.cat, noNode && 'no-node', t.failing && 'failing', t.unfinished && 'unfinished', t.instant && 'instant',
        this.selected.has(t.index) && 'selected', !this.selected.has(t.index) && this.highlighted.has(t.index) && 'highlighted']
        .filter(Boolean);
    },
    // Every task with what the page shows of it (for small traces: tests).
    testTasks() {
      return this.model.tasks.map((t) => {
        const fill = this.fillOf(t);
        return {index: t.index, task_id: t.task_id, node_id: t.node_id, seq: t.args.seq, stream: t.lane.tid, lane: t.lane.key,
          depth: t.depth, op_type: opscope.opTypeRowOf(t), classes: this.classesOf(t), box: this.taskBox(t.index),
          fill: fill === this.hatches.failing ? 'hatch-failing' : fill === this.hatches.unfinished ? 'hatch-unfinished' : fill,
          cross: t.failing};
      });
    },
    testLanes() {
      const [ox, oy] = this.clientOrigin(), top = this.top();
      return this.model.lanes.map((l) => ({key: l.key, tid: l.tid, name: l.name, depth: l.depth, y0: oy + l.y - top, y1: oy + l.y + l.h - top}));
    },
    lastFrame() {
      if (!this.last) return null;
      const [ox, oy] = this.clientOrigin();
      const flows = this.last.flows.map((f) => ({...f, x1: f.x1 + ox, x2: f.x2 + ox, y1: f.y1 + oy, y2: f.y2 + oy}));
      return {...this.last, flows, range: this.range.slice(), rangeSel: this.rangeSel && this.rangeSel.slice(),
        plot: {x0: ox + this.labelW, x1: ox + this.labelW + this.size.plotW, y0: oy + AXIS_H, y1: oy + this.size.h}};
    },
  });
})();
