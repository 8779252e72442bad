'use strict';
// timeline_colours.js: what a timeline bar's colour says (its op type, its
// scope, or an ops-debug event's category) and the legend for it. The
// heaviest keys get the most distinct colours; fixed ones keep the meaning
// they have everywhere on the page (copies light blue, no node grey).
var opscope = window.opscope || (window.opscope = {});
(function () {
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f',
    '#3b6fb6', '#8cd17d', '#d37295', '#b6992d', '#499894', '#86bcb6', '#f1ce63', '#a0cbe8', '#ffbe7d', '#d4a6c8', '#79706e'];
  const FIXED = {'data movement': '#74c0fc', '(no node)': '#adb5bd', api: '#4e79a7', phase: '#a9c6e3', kernel: '#59a14f',
    memcpy: '#1c7ed6', transdata: '#63e6be', sync: '#495057',
    // vs baseline (diff_view.js): the verdicts, as the graphs' badges colour them.
    slower: '#e03131', faster: '#2f9e44', new: '#7048e8', 'added node': '#1098ad', 'within noise': '#ced4da',
    unchanged: '#e9ecef', gone: '#868e96'};
  const NO_NODE = '(no node)';

  // The ways a model's bars can be coloured, the first the default.
  opscope.colourModes = function (model) {
    const modes = [];
    if (model.tasks.some((t) => t.args.op_type !== undefined)) modes.push('op type');
    if (model.hasGraph) modes.push('scope');
    if (model.diff) modes.push('vs baseline');
    modes.push('category');
    return modes;
  };

  function keyFn(model, mode) {
    if (mode === 'category') return (t) => t.cat || 'event';
    if (mode === 'vs baseline') return (t) => opscope.diffKeyOfTask(model, t);
    if (mode === 'scope') {
      return (t) => {
        if (opscope.opTypeRowOf(t) === opscope.DATA_MOVEMENT) return opscope.DATA_MOVEMENT;
        const n = opscope.nodeOfTask(model, t);
        return n ? n.namespace || '/' : NO_NODE;
      };
    }
    return (t) => opscope.opTypeRowOf(t);
  }

  // {mode, keyOf(task) -> key index, colours[key index], entries: [{key, colour, count, total_us}]} by total time.
  opscope.timelineColours = function (model, mode) {
    const key = keyFn(model, mode), byKey = new Map(), keyOfTask = new Int32Array(model.tasks.length);
    for (const t of model.tasks) {
      const k = key(t);
      let e = byKey.get(k);
      if (!e) byKey.set(k, (e = {key: k, count: 0, total_us: 0, id: byKey.size}));
      e.count++;
      e.total_us += t.dur;
      keyOfTask[t.index] = e.id;
    }
    const entries = [...byKey.values()].sort((a, b) => b.total_us - a.total_us || (a.key < b.key ? -1 : 1));
    const colours = new Array(entries.length);
    let next = 0;
    for (const e of entries) {
      e.colour = FIXED[e.key] || (next < PALETTE.length ? PALETTE[next++] : hashColour(e.key));
      colours[e.id] = e.colour;
    }
    return {mode, entries, colours, keyOf: (index) => keyOfTask[index], colourOf: (index) => colours[keyOfTask[index]]};
  };

  function hashColour(key) {
    let h = 0;
    for (let i = 0; i < key.length; ++i) h = (h * 31 + key.charCodeAt(i)) | 0;
    return `hsl(${((h >>> 0) % 360)}, 55%, 55%)`;
  }

  // Dark text on light fills, white on dark ones.
  const inkCache = new Map();
  opscope.inkOn = function (fill) {
    if (inkCache.has(fill)) return inkCache.get(fill);
    let ink = '#ffffff';
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(fill);
    if (m) {
      const [r, g, b] = m.slice(1).map((x) => parseInt(x, 16) / 255);
      if (0.299 * r + 0.587 * g + 0.114 * b > 0.62) ink = '#1f2328';
    } else if (/hsl/.test(fill)) {
      ink = '#1f2328';
    }
    inkCache.set(fill, ink);
    return ink;
  };
})();
