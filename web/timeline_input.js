'use strict';
// timeline_input.js: what the mouse, the wheel and the keys do to a
// TimelineView, its tooltip, its legend and its search box.
//   wheel: zoom at the pointer · shift+wheel (or a sideways wheel): pan
//   drag: select a time range · shift+drag or middle drag: pan
//   click: select the task under the pointer · double-click: fit
var opscope = window.opscope || (window.opscope = {});
(function () {
  const DRAG_PX = 4;

  function point(view, ev) {
    const r = view.canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  }

  opscope.attachTimelineInput = function (view) {
    const host = view.host;
    let drag = null, lastDragEnd = -1e9;
    host.addEventListener('mousemove', (ev) => {
      if (drag && drag.moved) return;
      const i = view.taskAtPoint(ev.clientX, ev.clientY);
      host.classList.toggle('over-task', i >= 0);
      if (i >= 0) showTooltip(view, ev, view.model.tasks[i]);
      else view.tooltip.hidden = true;
    });
    host.addEventListener('mouseleave', () => (view.tooltip.hidden = true));
    host.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      view.tooltip.hidden = true;  // what was under the pointer has moved
      if (!view.size) return;
      const [a, b] = view.range, [px] = point(view, ev);
      const sideways = ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY);
      if (sideways) {
        const d = (ev.shiftKey && !ev.deltaX ? ev.deltaY : ev.deltaX) / view.plotWidth() * (b - a);
        view.setRange(a + d, b + d);
        return;
      }
      const at = view.timeAt(Math.max(view.labelW, px)), k = Math.exp(ev.deltaY * 0.0015);
      const f = (at - a) / (b - a), span = (b - a) * k;
      view.setRange(at - f * span, at + (1 - f) * span);
      // setRange bounds the span: keep the time under the pointer where it was.
      const [c, d] = view.range, s = d - c;
      view.range = [at - f * s, at + (1 - f) * s];
    }, {passive: false});
    host.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0 && ev.button !== 1) return;
      const [px] = point(view, ev);
      const pan = ev.shiftKey || ev.button === 1;
      if (!pan && px < view.labelW) return;
      drag = {x: ev.clientX, px, range: view.range.slice(), moved: false, pan};
      if (ev.button === 1) ev.preventDefault();
    });
    window.addEventListener('pointermove', (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x;
      if (!drag.moved && Math.abs(dx) < DRAG_PX) return;
      drag.moved = true;
      view.tooltip.hidden = true;
      if (drag.pan) {
        const dt = (dx / view.plotWidth()) * (drag.range[1] - drag.range[0]);
        view.setRange(drag.range[0] - dt, drag.range[1] - dt);
        host.classList.add('panning');
      } else {
        const right = view.labelW + view.plotWidth();
        const clamp = (x) => Math.max(view.labelW, Math.min(right, x));
        const t0 = view.timeAt(clamp(drag.px)), t1 = view.timeAt(clamp(drag.px + dx));
        view.setRangeSel([Math.min(t0, t1), Math.max(t0, t1)]);
      }
    });
    window.addEventListener('pointerup', () => {
      if (drag && drag.moved) {
        lastDragEnd = performance.now();
        if (!drag.pan && view.opts.onRange) view.opts.onRange(view.rangeSel);
      }
      host.classList.remove('panning');
      drag = null;
    });
    host.addEventListener('click', (ev) => {
      if (performance.now() - lastDragEnd < 250) return;  // the end of a drag, not a click
      const i = view.taskAtPoint(ev.clientX, ev.clientY);
      if (i < 0 && view.rangeSel) {
        view.setRangeSel(null);
        if (view.opts.onRange) view.opts.onRange(null);
      }
      view.onSelect(i >= 0 ? view.model.tasks[i] : null);
    });
    host.addEventListener('dblclick', () => view.fit());
    host.addEventListener('scroll', () => view.requestDraw());
    new ResizeObserver(() => view.requestDraw()).observe(host);
    if (view.opts.search) attachSearch(view, view.opts.search, view.opts.searchStatus);
  };

  function showTooltip(view, ev, t) {
    const model = view.model, node = opscope.nodeOfTask(model, t), a = t.args, perf = opscope.taskPerf(model, t);
    view.tooltip.replaceChildren();
    const rows = [t.task_id !== undefined ? ['task', `#${t.task_id}  ${t.name}`] : ['event', `${t.name} (${t.cat || 'no category'})`],
      a.op_type !== undefined ? ['op type', t.op_type] : a.op !== undefined && ['op', a.op], ['kernel', t.kernel || '–'],
      typeof a.state === 'string' && ['state', a.state + (t.failing ? ' · the failing launch' : '')],
      t.instant ? ['at', opscope.formatUs(t.ts)] : ['duration', opscope.formatUs(t.dur) + (t.unfinished ? ' or more' : '')],
      !t.instant && ['start', opscope.formatUs(t.ts)], ['stream', t.lane.name],
      model.hasGraph && ['node', node ? `${node.name} (node ${node.node_id})` : 'none: inserted by the compiler (' + t.cat + ')'],
      typeof a.bound === 'string' && ['bound', a.bound],
      opscope.hasEfficiency(a) && ['efficiency', opscope.formatEfficiency(a.efficiency) +
        (a.efficiency > 1 ? ` (above the ${a.bound} roof)` : '')],
      perf && ['achieved', opscope.formatRate(perf.gbs, 'GB/s') + ' · ' + opscope.formatRate(perf.gflops, 'GFLOP/s')]];
    for (const [k, v] of rows.filter(Boolean)) {
      const row = document.createElement('div');
      const key = document.createElement('span');
      key.className = 'key';
      key.textContent = k;
      row.append(key, document.createTextNode(v));
      view.tooltip.appendChild(row);
    }
    view.tooltip.hidden = false;
    const pad = 14, w = view.tooltip.offsetWidth, h = view.tooltip.offsetHeight;
    view.tooltip.style.left = Math.min(ev.clientX + pad, window.innerWidth - w - 4) + 'px';
    view.tooltip.style.top = (ev.clientY + pad + h > window.innerHeight ? ev.clientY - h - pad : ev.clientY + pad) + 'px';
  }

  // Enter selects the next task whose node name, op type or kernel holds the
  // text (exact names first) and brings it into view, zoomed to if thin.
  function attachSearch(view, input, status) {
    let hits = [], at = -1, last = null, lowered = null;
    const find = (q) => {
      q = q.trim().toLowerCase();
      if (!q) return [];
      const tasks = view.model.tasks;
      if (!lowered) lowered = tasks.map((t) => [t.name, t.op_type, t.kernel].join('\u0000').toLowerCase());
      const exact = [], partial = [];
      for (let i = 0; i < tasks.length; ++i) {
        if (!lowered[i].includes(q)) continue;
        (tasks[i].name.toLowerCase() === q ? exact : partial).push(i);
      }
      return exact.concat(partial);
    };
    const refresh = () => {
      hits = find(input.value);
      at = -1;
      last = input.value;
    };
    input.addEventListener('input', () => {
      refresh();
      status.textContent = input.value.trim() ? `${hits.length.toLocaleString('en-US')} found` : '';
      input.classList.toggle('no-match', !!input.value.trim() && !hits.length);
    });
    input.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Enter') return;
      if (input.value !== last) refresh();
      if (!hits.length) {
        status.textContent = 'no task named like that';
        input.classList.add('no-match');
        return;
      }
      at = (at + (ev.shiftKey ? hits.length - 1 : 1)) % hits.length;
      const task = view.model.tasks[hits[at]];
      view.onSelect(task);
      view.reveal(task, {zoom: true});
      status.textContent = `${(at + 1).toLocaleString('en-US')} of ${hits.length.toLocaleString('en-US')}`;
    });
  }

  // The legend: one swatch per colour key present, heaviest first, and the
  // choice of what colours say.
  const LEGEND_MAX = 40;
  opscope.renderTimelineLegend = function (host, view, onMode) {
    const parts = [];
    if (view.modes.length > 1) {
      const select = document.createElement('select');
      select.className = 'colour-mode';
      for (const m of view.modes) select.append(new Option('colour: ' + m, m, false, m === view.colours.mode));
      select.addEventListener('change', () => onMode(select.value));
      parts.push(select);
    }
    const entries = view.colours.entries;
    for (const e of entries.slice(0, LEGEND_MAX)) {
      const item = document.createElement('span');
      item.className = 'legend-item';
      item.dataset.key = e.key;
      item.title = `${e.key}: ${e.count.toLocaleString('en-US')} · ${opscope.formatUs(e.total_us)}`;
      const swatch = document.createElement('i');
      swatch.style.background = e.colour;
      item.append(swatch, document.createTextNode(e.key));
      parts.push(item);
    }
    if (entries.length > LEGEND_MAX) {
      parts.push(Object.assign(document.createElement('span'), {className: 'muted', textContent: `+${entries.length - LEGEND_MAX} more`}));
    }
    host.replaceChildren(...parts);
  };
})();
