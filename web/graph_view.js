'use strict';
// graph_view.js: one graph layer as SVG, drawn at the coordinates graph.json
// carries (pos.x is a node's centre, pos.y its rank's), with pan and zoom.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const NODE_W = 156, NODE_H = 44, MIN_SCALE = 0.1, MAX_SCALE = 4;
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#edc948', '#9c755f', '#ff9da7'];

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  // "/branch_a/conv1" -> "branch_a": the scope a user named, coloured alike in both layers.
  function topScope(ns) {
    const parts = (ns || '').split('/').filter(Boolean);
    return parts.length ? parts[0] : '';
  }
  const scopeColours = new Map();
  opscope.scopeColour = function (ns) {
    const scope = topScope(ns);
    if (!scope) return '#b8bec6';
    if (!scopeColours.has(scope)) scopeColours.set(scope, PALETTE[scopeColours.size % PALETTE.length]);
    return scopeColours.get(scope);
  };

  // Keeps the end of a long name, which is the part that tells nodes apart.
  function clip(text, max) {
    return text.length <= max ? text : '…' + text.slice(text.length - max + 1);
  }

  class GraphView {
    constructor(host, layer, onSelect) {
      this.host = host;
      this.layer = layer;
      this.onSelect = onSelect;
      this.view = {scale: 1, tx: 0, ty: 0};
      this.nodeEls = new Map();
      this.render();
      this.attachPanZoom();
    }

    render() {
      const layer = this.layer;
      this.svg = el('svg', {class: 'graph', 'data-layer': layer.name});
      const defs = el('defs', {}, this.svg);
      const marker = el('marker', {id: 'arrow-' + layer.name, viewBox: '0 0 10 10', refX: 9, refY: 5,
        markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse'}, defs);
      el('path', {d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead'}, marker);
      this.viewport = el('g', {class: 'viewport'}, this.svg);
      this.drawScopes(el('g', {class: 'scopes'}, this.viewport));
      const edges = el('g', {class: 'edges'}, this.viewport);
      for (const e of layer.edges) {
        const a = layer.byId.get(e.from).pos, b = layer.byId.get(e.to).pos;
        if (!a || !b) continue;
        const y1 = a.y + NODE_H / 2, y2 = b.y - NODE_H / 2, my = (y1 + y2) / 2;
        const path = el('path', {class: 'edge', 'data-from': e.from, 'data-to': e.to, 'marker-end': `url(#arrow-${layer.name})`,
          d: `M${a.x},${y1} C${a.x},${my} ${b.x},${my} ${b.x},${y2}`}, edges);
        el('title', {}, path).textContent = e.value;
      }
      const nodes = el('g', {class: 'nodes'}, this.viewport);
      for (const n of layer.nodes) this.drawNode(nodes, n);
      this.host.replaceChildren(this.svg);
    }

    drawNode(parent, n) {
      const p = n.pos || {x: 0, y: 0};
      const classes = ['node', 'kind-' + n.kind];
      if (n.executed === false) classes.push('not-executed');
      if (n.executable === false) classes.push('not-executable');
      const g = el('g', {class: classes.join(' '), 'data-node-id': n.node_id, 'data-layer': this.layer.name,
        'data-op-type': n.op_type, transform: `translate(${p.x - NODE_W / 2},${p.y - NODE_H / 2})`}, parent);
      el('rect', {class: 'box', width: NODE_W, height: NODE_H, rx: 6}, g);
      el('rect', {class: 'scope-stripe', width: 5, height: NODE_H - 8, x: 3, y: 4, rx: 2, fill: opscope.scopeColour(n.namespace)}, g);
      el('text', {class: 'op', x: NODE_W / 2 + 2, y: 18}, g).textContent = clip(n.op_type, 20);
      el('text', {class: 'ns', x: NODE_W / 2 + 2, y: 34}, g).textContent = clip(n.namespace || n.name || '', 24);
      if (n.executable === false) el('text', {class: 'badge', x: NODE_W - 8, y: 14}, g).textContent = '!';
      const why = n.executable === false ? '\nnot executable: ' + (n.not_executable_reason || '')
        : n.executed === false ? '\nnot executed: ' + (n.reason || '') : '';
      el('title', {}, g).textContent = `${n.name || '(unnamed)'}  [${n.op_type}, node ${n.node_id}]${why}`;
      this.nodeEls.set(n.node_id, g);
    }

    // A translucent box per top-level scope, drawn only where it would not
    // cover another scope's node (the layout does not cluster by scope).
    drawScopes(parent) {
      const boxes = new Map();
      for (const n of this.layer.nodes) {
        const scope = topScope(n.namespace);
        if (!scope || !n.pos) continue;
        const b = boxes.get(scope) || {x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity, ns: n.namespace};
        b.x0 = Math.min(b.x0, n.pos.x - NODE_W / 2 - 10);
        b.x1 = Math.max(b.x1, n.pos.x + NODE_W / 2 + 10);
        b.y0 = Math.min(b.y0, n.pos.y - NODE_H / 2 - 22);
        b.y1 = Math.max(b.y1, n.pos.y + NODE_H / 2 + 8);
        boxes.set(scope, b);
      }
      if (boxes.size < 2) return;  // one scope around everything says nothing
      for (const [scope, b] of boxes) {
        const foreign = this.layer.nodes.some((n) => n.pos && topScope(n.namespace) !== scope &&
          n.pos.x + NODE_W / 2 > b.x0 && n.pos.x - NODE_W / 2 < b.x1 && n.pos.y + NODE_H / 2 > b.y0 && n.pos.y - NODE_H / 2 < b.y1);
        if (foreign) continue;
        const colour = opscope.scopeColour(b.ns);
        const g = el('g', {class: 'scope', 'data-scope': scope}, parent);
        el('rect', {x: b.x0, y: b.y0, width: b.x1 - b.x0, height: b.y1 - b.y0, rx: 10, fill: colour, stroke: colour}, g);
        el('text', {x: b.x0 + 8, y: b.y0 + 14, fill: colour}, g).textContent = '/' + scope;
      }
    }

    bounds() {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const n of this.layer.nodes) {
        if (!n.pos) continue;
        x0 = Math.min(x0, n.pos.x - NODE_W / 2);
        x1 = Math.max(x1, n.pos.x + NODE_W / 2);
        y0 = Math.min(y0, n.pos.y - NODE_H / 2 - 24);
        y1 = Math.max(y1, n.pos.y + NODE_H / 2);
      }
      return x0 === Infinity ? {x0: 0, y0: 0, x1: 1, y1: 1} : {x0, y0, x1, y1};
    }

    // The whole graph when it fits at a readable size; a tall one is shown
    // across its width from the top, to be panned down.
    fit() {
      const b = this.bounds(), w = this.host.clientWidth || 400, h = this.host.clientHeight || 300, pad = 16;
      const widthFit = (w - 2 * pad) / (b.x1 - b.x0), heightFit = (h - 2 * pad) / (b.y1 - b.y0);
      const scale = Math.min(1.1, Math.max(Math.min(widthFit, heightFit), Math.min(0.85, widthFit)));
      const tx = w / 2 - scale * (b.x0 + b.x1) / 2;
      const ty = scale * (b.y1 - b.y0) + 2 * pad <= h ? h / 2 - scale * (b.y0 + b.y1) / 2 : pad - scale * b.y0;
      this.setView({scale, tx, ty});
    }

    setView(v) {
      this.view = v;
      this.viewport.setAttribute('transform', `translate(${v.tx},${v.ty}) scale(${v.scale})`);
    }

    centerOn(nodeId) {
      const n = this.layer.byId.get(nodeId);
      if (!n || !n.pos) return;
      const w = this.host.clientWidth, h = this.host.clientHeight, scale = Math.max(this.view.scale, 0.8);
      this.setView({scale, tx: w / 2 - scale * n.pos.x, ty: h / 2 - scale * n.pos.y});
    }

    // Shows `centre` if it is out of view, without changing the zoom.
    reveal(nodeId) {
      const g = this.nodeEls.get(nodeId);
      if (!g) return;
      const r = g.getBoundingClientRect(), host = this.host.getBoundingClientRect();
      if (r.left < host.left || r.right > host.right || r.top < host.top || r.bottom > host.bottom) this.centerOn(nodeId);
    }

    // selected / highlighted: Sets of node ids of this layer.
    setMarks(selected, highlighted) {
      for (const [id, g] of this.nodeEls) {
        g.classList.toggle('selected', selected.has(id));
        g.classList.toggle('highlighted', !selected.has(id) && highlighted.has(id));
      }
      const lit = (id) => selected.has(id) || highlighted.has(id);
      for (const p of this.svg.querySelectorAll('path.edge')) {
        p.classList.toggle('lit', lit(+p.dataset.from) && lit(+p.dataset.to));
      }
      this.svg.classList.toggle('has-marks', selected.size + highlighted.size > 0);
    }

    attachPanZoom() {
      let drag = null;
      this.svg.addEventListener('wheel', (ev) => {
        ev.preventDefault();
        const r = this.svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
        const v = this.view, k = Math.exp(-ev.deltaY * 0.0015);
        const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, v.scale * k)), f = scale / v.scale;
        this.setView({scale, tx: mx - f * (mx - v.tx), ty: my - f * (my - v.ty)});
      }, {passive: false});
      this.svg.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0) return;
        drag = {x: ev.clientX, y: ev.clientY, tx: this.view.tx, ty: this.view.ty, moved: false};
      });
      window.addEventListener('pointermove', (ev) => {
        if (!drag) return;
        const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) < 4) return;
        drag.moved = true;
        this.svg.classList.add('panning');
        this.setView({scale: this.view.scale, tx: drag.tx + dx, ty: drag.ty + dy});
      });
      window.addEventListener('pointerup', () => {
        if (drag && drag.moved) this.lastPanEnd = performance.now();
        drag = null;
        this.svg.classList.remove('panning');
      });
      this.svg.addEventListener('click', (ev) => {
        if (performance.now() - (this.lastPanEnd || -1e9) < 250) return;  // the end of a pan, not a click
        const g = ev.target.closest('g.node');
        this.onSelect(g ? this.layer.byId.get(+g.dataset.nodeId) : null);
      });
      this.svg.addEventListener('dblclick', (ev) => {
        if (!ev.target.closest('g.node')) this.fit();
      });
    }
  }

  opscope.GraphView = GraphView;
})();
