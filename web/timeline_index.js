'use strict';
// timeline_index.js: the tasks of each sub-row (a lane at one nesting depth)
// in start order, in typed arrays, so that drawing a window and hit testing
// cost a binary search, not a walk over a million tasks.
var opscope = window.opscope || (window.opscope = {});
(function () {
  // First i in [lo, hi) with arr[i] > v (arr sorted ascending).
  function upper(arr, v, lo, hi) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] > v) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  // First i in [lo, hi) with arr[i] >= v.
  function lower(arr, v, lo, hi) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] >= v) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  class Row {
    constructor(lane, depth, tasks) {
      tasks.sort((a, b) => a.ts - b.ts || a.index - b.index);
      const n = tasks.length;
      this.lane = lane;
      this.depth = depth;
      this.length = n;
      this.starts = new Float64Array(n);
      this.ends = new Float64Array(n);
      // Ends are sorted only where spans do not overlap; the running maximum
      // always is, and bounds the first task that can reach into a window.
      this.maxEnd = new Float64Array(n);
      this.idx = new Int32Array(n);
      let m = -Infinity;
      for (let i = 0; i < n; ++i) {
        const t = tasks[i];
        this.starts[i] = t.ts;
        this.ends[i] = t.ts + t.dur;
        m = Math.max(m, this.ends[i]);
        this.maxEnd[i] = m;
        this.idx[i] = t.index;
      }
    }
    // The positions [first, last) of the tasks that can overlap [a, b].
    window(a, b) {
      return [lower(this.maxEnd, a, 0, this.length), upper(this.starts, b, 0, this.length)];
    }
    // First position in [from, to) starting after t.
    startsAfter(t, from, to) {
      return upper(this.starts, t, from, to);
    }
    // The task holding time t (within eps), the latest started: -1 if none.
    holding(t, eps) {
      const [first, last] = this.window(t - eps, t + eps);
      for (let i = last - 1; i >= first; --i) {
        if (this.starts[i] - eps <= t && t <= this.ends[i] + eps) return this.idx[i];
      }
      return -1;
    }
  }

  class TimelineIndex {
    constructor(model) {
      this.rows = [];
      for (const lane of model.lanes) {
        const byDepth = Array.from({length: lane.depth}, () => []);
        for (const t of lane.tasks) byDepth[t.depth].push(t);
        lane.rows = byDepth.map((tasks, depth) => new Row(lane, depth, tasks));
        this.rows.push(...lane.rows);
      }
    }
    // The deepest task of the lane open at ts, and its depth: where a flow binds.
    deepestAt(lane, ts, eps) {
      for (let d = lane.rows.length - 1; d >= 0; --d) {
        const i = lane.rows[d].holding(ts, eps);
        if (i >= 0) return {depth: d, index: i};
      }
      return {depth: 0, index: -1};
    }
  }

  opscope.TimelineIndex = TimelineIndex;
})();
