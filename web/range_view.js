'use strict';
// range_view.js: a time range dragged on the timeline, as a table per op
// type: the tasks that overlap it, their time inside it, and what they
// achieved (GB/s, GFLOP/s over their whole duration, against the peaks).
var opscope = window.opscope || (window.opscope = {});
(function () {
  // A span overlaps [t0, t1] when it starts before t1 and ends after t0; an instant when it lies within.
  opscope.overlapsRange = (t, t0, t1) => (t.instant ? t.ts >= t0 && t.ts <= t1 : t.ts < t1 && t.ts + t.dur > t0);

  // [{op_type, count, in_range_us, bytes, flops, cost_us, bw_ns, flops_ns}] by time in range.
  opscope.rangeStats = function (model, t0, t1) {
    const rows = new Map(), tasks = model.tasks;
    for (const row of model.index.rows) {
      const [first, last] = row.window(t0, t1);
      for (let i = first; i < last; ++i) {
        const t = tasks[row.idx[i]];
        if (!opscope.overlapsRange(t, t0, t1)) continue;
        const key = opscope.opTypeRowOf(t);
        let r = rows.get(key);
        if (!r) rows.set(key, (r = {op_type: key, count: 0, in_range_us: 0, bytes: 0, flops: 0, cost_us: 0, bw_ns: 0, flops_ns: 0}));
        r.count++;
        r.in_range_us += Math.max(0, Math.min(t1, t.ts + t.dur) - Math.max(t0, t.ts));
        const perf = opscope.taskPerf(model, t);
        if (!perf) continue;
        r.bytes += perf.bytes;
        r.flops += perf.flops;
        r.cost_us += t.dur;
        // Time the work would take at the peaks (bytes / GB/s = ns): summed, its share of the time is the efficiency.
        if (perf.peakGbs > 0) r.bw_ns += perf.bytes / perf.peakGbs;
        if (perf.peakGflops > 0) r.flops_ns += perf.flops / perf.peakGflops;
      }
    }
    return [...rows.values()].sort((a, b) => b.in_range_us - a.in_range_us || (a.op_type < b.op_type ? -1 : 1));
  };

  function cell(cls, ...children) {
    const td = document.createElement('td');
    td.className = cls;
    td.append(...children);
    return td;
  }
  opscope.renderRange = function (section, model, range) {
    section.hidden = !range;
    if (!range) return;
    const [t0, t1] = range, rows = opscope.rangeStats(model, t0, t1);
    section.querySelector('.range-facts').textContent =
      `${opscope.formatUs(t0)} – ${opscope.formatUs(t1)} (${opscope.formatUs(t1 - t0)}) · ${rows.reduce((n, r) => n + r.count, 0).toLocaleString('en-US')} tasks`;
    const table = document.createElement('table');
    table.className = 'mini range-table';
    table.id = 'range-table';
    const head = document.createElement('tr');
    for (const [text, cls] of [['op type', ''], ['count', 'num'], ['in range', 'num'], [model.peaks ? 'achieved (of peak)' : 'achieved', 'num']]) {
      head.append(Object.assign(document.createElement('th'), {className: cls, textContent: text}));
    }
    table.append(head);
    for (const r of rows) {
      const tr = document.createElement('tr');
      tr.dataset.opType = r.op_type;
      tr.append(cell('', r.op_type), cell('num count', r.count.toLocaleString('en-US')), cell('num', opscope.formatUs(r.in_range_us)),
        cell('num achieved', ...opscope.achievedLines(model, r)));
      table.append(tr);
    }
    section.querySelector('.range-body').replaceChildren(rows.length ? table
      : Object.assign(document.createElement('p'), {className: 'muted', textContent: 'no task in this range'}));
  };
})();
