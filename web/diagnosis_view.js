'use strict';
// diagnosis_view.js: the panel beside the timeline of an ops-debug diagnose:
// what happened (status, signal or exit code, the failing launch), the causes
// ranked by the library (confidence, cause, evidence, fix), the faulting
// stack, and the earlier reports the op instance was linked to. It draws the
// "opscope.diagnosis_panel/1" document the library made; which launches a
// cause names (cause.launches, by seq) was decided there, not here.
//
//   opscope.renderDiagnosis(host, panel, {onLaunches: (seqs, rank) => ...});
var opscope = window.opscope || (window.opscope = {});
(function () {
  const h = opscope.h;

  const launchLink = (seq, text) => h('a', {class: 'link', href: '#', 'data-link': 'launch', 'data-seq': seq}, text);

  function summary(p) {
    const bad = p.status !== 'clean';
    const how = p.signal ? p.signal : typeof p.exit_code === 'number' ? `exit code ${p.exit_code}` : '';
    const rows = [
      p.op && ['op', p.op], p.kernel && ['kernel', h('span', {class: 'mono'}, p.kernel)],
      p.op_id && ['op_id', p.failing_seq !== null && p.failing_seq !== undefined
        ? h('span', {}, p.op_id, ' · ', launchLink(p.failing_seq, `launch #${p.failing_seq}`)) : p.op_id],
      p.fault && ['fault', (p.fault.message || '').includes(p.fault.address) ? p.fault.message
        : `${p.fault.message || 'at'} (address ${p.fault.address})`],
      p.device && ['device', p.device],
      typeof p.wall_s === 'number' && ['wall time', opscope.formatUs(p.wall_s * 1e6)],
      typeof p.sync_points === 'boolean' && ['sync points', p.sync_points ? 'on (the kernel named is the one that failed)' : 'off'],
      Array.isArray(p.command) && p.command.length && ['command', h('span', {class: 'mono'}, p.command.join(' '))],
    ].filter(Boolean);
    return [h('p', {class: 'diag-status ' + (bad ? 'bad' : 'ok'), id: 'diagnosis-status'},
      h('span', {class: 'badge'}, p.status), how ? ' ' + how : ''),
    h('dl', {class: 'facts'}, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))];
  }

  function causes(p) {
    if (!p.causes.length) {
      return [h('p', {class: 'muted', id: 'causes-none'}, p.status === 'clean' ? 'No cause: the run is clean.' : 'No rule fired.')];
    }
    return [h('ol', {class: 'causes', id: 'causes'}, p.causes.map((c) => {
      const linked = c.launches && c.launches.length > 0;
      return h('li', {class: 'cause conf-' + c.confidence + (linked ? ' linked' : ''), 'data-rank': c.rank,
        'data-rule': c.rule, 'data-launches': (c.launches || []).join(' '), title: linked ? 'show it on the timeline' : ''},
      h('div', {class: 'cause-head'}, h('span', {class: 'confidence'}, c.confidence), h('span', {class: 'rule'}, c.rule),
        linked ? h('span', {class: 'goto'}, c.launches.map((s) => '#' + s).join(' ')) : null),
      h('div', {class: 'cause-text'}, c.cause),
      c.evidence.length ? h('ul', {class: 'evidence'}, c.evidence.map((e) => h('li', {}, e))) : null,
      c.fix ? h('div', {class: 'fix'}, h('b', {}, 'fix '), c.fix) : null);
    }))];
  }

  function frames(list) {
    return h('ol', {class: 'stack'}, list.map((f) => h('li', {class: 'frame'},
      h('div', {class: 'function mono'}, f.function || f.pc),
      h('div', {class: 'where muted'}, f.file ? `${f.file}:${f.line}` : 'no source line', f.module ? ' · ' + f.module : ''))));
  }

  function stack(p) {
    if (p.stack.length) return [h('h4', {}, 'faulting stack'), frames(p.stack)];
    // A hang has no faulting thread: every thread's stack, each folded.
    if (!p.threads.length) return [];
    return [h('h4', {}, `threads (${p.threads.length})`), ...p.threads.map((t, i) =>
      h('details', {class: 'thread', open: i === 0}, h('summary', {}, `thread ${t.tid} ${t.name || ''}`), frames(t.frames)))];
  }

  function links(p) {
    if (!(p.links || []).length) return [];
    return [h('h4', {}, 'earlier reports'), h('ul', {class: 'report-links'}, p.links.map((l) =>
      h('li', {}, h('span', {class: 'status ' + (l.status === 'passed' ? 'ok' : 'bad')}, l.status), ' ', l.text,
        h('div', {class: 'muted mono'}, l.report))))];
  }

  function notes(p) {
    const found = (p.static_findings || []).map((f) => `${f.file}:${f.line}: ${f.severity}: ${f.message}`);
    const all = [...found, ...(p.notes || [])];
    return all.length ? [h('h4', {}, 'notes'), h('ul', {class: 'notes'}, all.map((n) => h('li', {}, n)))] : [];
  }

  opscope.renderDiagnosis = function (host, panel, {onLaunches}) {
    const left = h('div', {class: 'diag-col'}, h('h4', {}, `causes, most likely first (${panel.causes.length})`), causes(panel));
    const right = h('div', {class: 'diag-col'}, summary(panel), stack(panel), links(panel), notes(panel));
    host.replaceChildren(left, right);
    host.addEventListener('click', (ev) => {
      const a = ev.target.closest('a[data-link="launch"]');
      if (a) {
        ev.preventDefault();
        onLaunches([+a.dataset.seq], null);
        return;
      }
      const li = ev.target.closest('li.cause.linked');
      if (li) onLaunches(li.dataset.launches.split(' ').map(Number), +li.dataset.rank);
    });
  };

  // Marks the cause whose launches are selected (null: none).
  opscope.markCause = function (host, rank) {
    for (const li of host.querySelectorAll('li.cause')) li.classList.toggle('selected', +li.dataset.rank === rank);
  };
})();
