'use strict';
// perf.js: what a task achieved, from the bytes and FLOPs its op's cost model
// gave (trace.json's args.bytes / args.flops; ops-debug's bytes_read +
// bytes_written) over its measured time, and that against the machine's
// calibrated peaks (summary.json's roofline.peaks). The library counted the
// work; the page only divides.
var opscope = window.opscope || (window.opscope = {});
(function () {
  // The task's bytes and FLOPs, or null when its op has no cost model.
  opscope.costOf = function (task) {
    const a = task.args;
    if (a.bound === 'none') return null;
    const bytes = typeof a.bytes === 'number' ? a.bytes
      : typeof a.bytes_read === 'number' || typeof a.bytes_written === 'number' ? (a.bytes_read || 0) + (a.bytes_written || 0)
      : null;
    const flops = typeof a.flops === 'number' ? a.flops : null;
    return bytes === null && flops === null ? null : {bytes: bytes || 0, flops: flops || 0};
  };

  // The roof a task is held to: f64 work against the f64 peak (as RoofPeaks::GflopsFor).
  function peakGflops(model, task, peaks) {
    const node = opscope.nodeOfTask(model, task);
    const dtype = node && node.outputs && node.outputs[0] && node.outputs[0].dtype;
    return dtype === 'float64' ? peaks.gflops_f64 : peaks.gflops_f32;
  }

  // {gbs, gflops, bwShare, flopsShare} of one task: shares of the peaks in
  // [0, ...), null where no peak is known. Null without a cost or a duration.
  opscope.taskPerf = function (model, task) {
    const cost = opscope.costOf(task);
    if (!cost || task.instant || task.unfinished || !(task.dur > 0)) return null;
    const ns = task.dur * 1e3;
    const perf = {bytes: cost.bytes, flops: cost.flops, gbs: cost.bytes / ns, gflops: cost.flops / ns, bwShare: null, flopsShare: null};
    const peaks = model.peaks;
    if (peaks) {
      const pf = peakGflops(model, task, peaks);
      if (peaks.bandwidth_gbs > 0) perf.bwShare = perf.gbs / peaks.bandwidth_gbs;
      if (pf > 0) perf.flopsShare = perf.gflops / pf;
      perf.peakGbs = peaks.bandwidth_gbs;
      perf.peakGflops = pf;
    }
    return perf;
  };

  opscope.formatRate = function (v, unit) {
    if (typeof v !== 'number' || !isFinite(v)) return '–';
    return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 0.01 ? v.toFixed(2) : v.toPrecision(2)) + (unit ? ' ' + unit : '');
  };
  opscope.formatShare = (share) => (share === null ? '' : opscope.formatEfficiency(share) + ' of peak');

  // What a group of tasks achieved, as a table cell's lines: GB/s and GFLOP/s
  // of their summed work over their summed time, each with its share of the
  // peak. sum: {bytes, flops, cost_us, bw_ns, flops_ns} (range_view.js).
  // compact: for a narrow table, the shares go to the line's title.
  opscope.achievedLines = function (model, sum, {compact = false} = {}) {
    if (!(sum.cost_us > 0)) return ['–'];
    const ns = sum.cost_us * 1e3, line = (v, peakNs, unit, longUnit) => {
      const div = document.createElement('div');
      div.textContent = opscope.formatRate(v, compact ? unit : longUnit);
      if (!model.peaks) return div;
      const share = opscope.formatEfficiency(peakNs / ns);
      if (compact) div.title = `${opscope.formatRate(v, longUnit)}: ${share} of peak`;
      else div.append(Object.assign(document.createElement('span'), {className: 'muted share-of-peak', textContent: ' ' + share}));
      return div;
    };
    return [line(sum.bytes / ns, sum.bw_ns, 'GB/s', 'GB/s'), line(sum.flops / ns, sum.flops_ns, 'GF/s', 'GFLOP/s')];
  };

  // "12.3 GB/s (4.1 % of peak)"
  opscope.rateText = function (v, share, unit) {
    const s = opscope.formatShare(share);
    return opscope.formatRate(v, unit) + (s ? ` (${s})` : '');
  };
})();
