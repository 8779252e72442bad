'use strict';
// graph_view.js: one graph layer, drawn from the library's layout (scopes
// as frames that fold and unfold, Constant and Identity-of-constant nodes
// attached to their consumers rather than drawn). Only what the viewport
// shows is in the DOM, redrawn once per animation frame after a pan or zoom;
// zoomed far out, nodes lose their text and are batched into one path, and
// a minimap shows the whole layer with the view's rectangle.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const MIN_SCALE = 0.02, MAX_SCALE = 4;
  // Below these scales labels are unreadable, then boxes too small to click.
  const TEXT_SCALE = 0.32, DETAIL_SCALE = 0.12;
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

  // What a node's box says under its op type: its name less the scope it is
  // drawn in, less a trailing op-type part ("/enc/attn/q/MatMul" in /enc/attn
  // -> "q").
  function shortName(n, scopePath) {
    let name = n.name || '';
    if (scopePath && name.startsWith(scopePath + '/')) name = name.slice(scopePath.length + 1);
    const parts = name.split('/').filter(Boolean);
    if (parts.length > 1 && parts[parts.length - 1].startsWith(n.op_type)) parts.pop();
    const short = parts.join('/');
    return short === n.op_type ? '' : short || (n.name ? '' : '#' + n.node_id);
  }

  function shapeText(v) {
    if (!v) return '?';
    const shape = v.shape ? `[${v.shape.map((d) => (d === null ? '?' : d)).join(',')}]` : '[?]';
    return `${v.dtype || '?'}${shape}`;
  }

  // A node's state as the legend words it: fusion and a resolved If are
  // normal compiler work, only a node that cannot run is a problem.
  function nodeState(n) {
    if (n.executable === false && !(n.branches && n.executed === false)) return 'not-executable';
    if (n.compiled_node_id !== undefined && n.executed === false) return 'fused-away';
    if (n.branches) return 'resolved';
    if (n.executed === false) return 'not-executed';
    return 'ran';
  }
  opscope.nodeState = nodeState;

  class GraphView {
    constructor(host, layer, onSelect) {
      this.host = host;
      this.layer = layer;
      this.onSelect = onSelect;
      this.view = {scale: 1, tx: 0, ty: 0};
      this.selected = new Set();
      this.highlighted = new Set();
      this.index = opscope.indexLayout(layer);
      this.values = new Map((layer.values || []).map((v) => [v.name, v]));
      this.folded = new Set();
      for (const s of (layer.graphLayout || {scopes: []}).scopes) if (s.folded) this.folded.add(s.id);
      this.build();
      this.place();
      this.attachPanZoom();
    }

    build() {
      const layer = this.layer;
      this.svg = el('svg', {class: 'graph', 'data-layer': layer.name});
      const defs = el('defs', {}, this.svg);
      const marker = el('marker', {id: 'arrow-' + layer.name, viewBox: '0 0 10 10', refX: 9, refY: 5,
        markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse'}, defs);
      el('path', {d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead'}, marker);
      this.viewport = el('g', {class: 'viewport'}, this.svg);
      this.minimap = document.createElement('canvas');
      this.minimap.className = 'minimap';
      this.legend = this.buildLegend();
      this.attachedNodes = layer.nodes.filter((n) => n.attached_to && n.attached_to.length);
      this.showAttached = false;
      const controls = document.createElement('div');
      controls.className = 'graph-controls';
      if (this.attachedNodes.length) {
        const box = opscope.h('input', {type: 'checkbox', class: 'show-attached'});
        const label = opscope.h('label', {}, box, ` show ${this.attachedNodes.length} constant node(s)`);
        box.addEventListener('change', (ev) => {
          this.showAttached = ev.target.checked;
          this.renderNow();
        });
        controls.append(label);
      }
      this.host.replaceChildren(this.svg, this.minimap, this.legend, controls);
    }

    // Built as nodes, never as markup: the scope names come from the model.
    buildLegend() {
      const h = opscope.h;
      const scopes = [...new Set(this.layer.nodes.map((n) => topScope(n.namespace)).filter(Boolean))];
      const icon = (draw) => {
        const svg = el('svg', {width: 26, height: 14});
        draw(svg);
        return svg;
      };
      const swatch = (cls, text) => h('div', {class: 'row'},
        icon((svg) => el('rect', {class: cls, x: 1, y: 1, width: 24, height: 12, rx: 3}, svg)), text);
      const attached = this.index ? Object.keys(this.index.L.attached || {}).length : 0;
      const accuracy = this.layer.nodes.some((n) => n.accuracy);
      const scopeRow = (s) => {
        const dot = h('span', {class: 'dot'});
        dot.style.background = opscope.scopeColour('/' + s);
        return h('div', {class: 'row'}, dot, '/' + s);
      };
      return h('details', {class: 'graph-legend'}, h('summary', {}, 'legend'),
        swatch('lg-ran', 'ran (a task executed it)'),
        swatch('lg-fused', 'fused: ran inside its compiled node'),
        swatch('lg-resolved', 'If resolved at compile time (its branch was inlined)'),
        swatch('lg-not-executed', 'not executed (on a branch not taken)'),
        swatch('lg-not-executable', 'cannot run: no kernel (!)'),
        swatch('lg-kind-fused', 'compiled: fused node'),
        swatch('lg-kind-transdata', 'compiled: layout conversion the compiler inserted'),
        swatch('lg-folded', 'folded scope: click to open (its node count)'),
        swatch('lg-selected', 'selected; orange: related to the selection'),
        // Against a baseline, the badges this layer shows.
        (opscope.DIFF_LEGEND || []).filter(([cls]) => this.layer.nodes.some((n) => opscope.diffBadge(n.diff)?.cls === cls))
          .map(([cls, text]) => swatch('lg-' + cls, 'badge: ' + text)),
        // inspector-cli accuracy: the fill is a node's own error, the node alone on the golden inputs.
        accuracy ? h('div', {class: 'row muted'}, 'fill: own error against the double-precision golden') : null,
        accuracy ? opscope.ACCURACY_LEGEND.map(([cls, text]) => swatch('lg-' + cls, text)) : [],
        h('div', {class: 'row'}, icon((svg) => el('path', {d: 'M1,7 H25', class: 'edge'}, svg)),
          'tensor (hover: name, dtype, shape); thicker: several'),
        attached ? h('div', {class: 'row muted'}, `${attached} constant / identity node(s) attached to their consumers (details)`) : null,
        scopes.length ? h('div', {class: 'row muted'}, 'stripe colour: top-level scope') : null,
        scopes.slice(0, 12).map(scopeRow));
    }

    // Boxes for the current fold state: the library's for the opening view,
    // re-placed here after a fold or unfold.
    place(recompute = false) {
      if (!this.index) {
        this.boxes = {nodes: new Map(), scopes: new Map(), routes: [], width: 1, height: 1, hiddenBy: []};
        return;
      }
      if (!recompute) {
        const L = this.index.L, nodes = new Map(), scopes = new Map();
        for (const n of this.layer.nodes) if (n.pos && n.pos.x !== undefined) nodes.set(n.node_id, {x: n.pos.x, y: n.pos.y, w: L.node_width, h: L.node_height});
        for (const s of L.scopes) if (s.box && s.id !== 0) scopes.set(s.id, {x: s.box[0], y: s.box[1], w: s.box[2], h: s.box[3]});
        // The page's own placement gives each route its tensors and each
        // scope what hides it; the library's boxes and bends are drawn.
        const placed = opscope.placeLayout(this.index, this.layer, this.folded);
        const valuesOf = new Map(placed.routes.map((r) => [endKey(r), r.values]));
        this.boxes = {nodes, scopes, routes: L.routes.map((r) => ({from: r.from, to: r.to, weight: r.weight, points: r.points,
          values: valuesOf.get(endKey(r)) || []})), width: L.width, height: L.height, hiddenBy: placed.hiddenBy};
      } else {
        this.boxes = opscope.placeLayout(this.index, this.layer, this.folded);
      }
      this.drawMinimap();
    }

    // The scope frame that shows a node: its own box, or the folded scope around it.
    visibleBoxOf(nodeId) {
      const b = this.boxes.nodes.get(nodeId);
      if (b) return b;
      const n = this.layer.byId.get(nodeId);
      if (!n || n.scope === undefined) {
        const to = n && n.attached_to && n.attached_to[0];
        return to !== undefined && to !== nodeId ? this.visibleBoxOf(to) : null;
      }
      const s = this.boxes.hiddenBy[n.scope];
      return s >= 0 ? this.boxes.scopes.get(s) : null;
    }

    toggleScope(id) {
      const before = this.boxes.scopes.get(id);
      if (this.folded.has(id)) this.folded.delete(id);
      else this.folded.add(id);
      this.place(true);
      // Keep the frame's top where it was on screen.
      const after = this.boxes.scopes.get(id);
      if (before && after) {
        const v = this.view;
        this.setView({scale: v.scale, tx: v.tx + v.scale * ((before.x) - (after.x)),
          ty: v.ty + v.scale * ((before.y - before.h / 2) - (after.y - after.h / 2))});
      } else {
        this.redraw();
      }
    }

    // Opens every folded scope around a node, so it has a box.
    unfoldTo(nodeId) {
      const n = this.layer.byId.get(nodeId);
      if (!n || n.scope === undefined || !this.index) return;
      let changed = false;
      for (let s = n.scope; s > 0; s = this.index.L.scopes[s].parent) if (this.folded.delete(s)) changed = true;
      if (changed) this.place(true);
    }

    // Redraws what the view shows, at most once per frame.
    redraw() {
      if (this.pending) return;
      this.pending = requestAnimationFrame(() => {
        this.pending = 0;
        this.render();
      });
    }

    renderNow() {
      if (this.pending) cancelAnimationFrame(this.pending);
      this.pending = 0;
      this.render();
    }

    render() {
      const t0 = performance.now();
      const v = this.view, w = this.host.clientWidth || 400, h = this.host.clientHeight || 300;
      const margin = 200 / v.scale;  // a little beyond the edges, so a small pan shows no gap
      const x0 = -v.tx / v.scale - margin, y0 = -v.ty / v.scale - margin;
      const x1 = (w - v.tx) / v.scale + margin, y1 = (h - v.ty) / v.scale + margin;
      const inView = (b) => b.x + b.w / 2 >= x0 && b.x - b.w / 2 <= x1 && b.y + b.h / 2 >= y0 && b.y - b.h / 2 <= y1;
      const text = v.scale >= TEXT_SCALE, detail = v.scale >= DETAIL_SCALE;
      const L = this.index && this.index.L;
      const root = el('g', {class: 'layer' + (text ? '' : ' no-text')});
      const scopesG = el('g', {class: 'scopes'}, root), edgesG = el('g', {class: 'edges'}, root), nodesG = el('g', {class: 'nodes'}, root);
      const marked = this.selected.size + this.highlighted.size > 0;
      this.nodeEls = new Map();
      this.drawn = {nodes: 0, scopes: 0, routes: 0};
      // Frames outermost first, so an inner one lies on top.
      const frames = [...this.boxes.scopes.entries()].filter(([, b]) => inView(b)).sort((a, b) => b[1].w * b[1].h - a[1].w * a[1].h);
      for (const [id, b] of frames) {
        const s = L.scopes[id], folded = this.folded.has(id);
        const colour = opscope.scopeColour(s.path);
        const g = el('g', {class: 'scope' + (folded ? ' folded' : ''), 'data-scope': id, 'data-path': s.path,
          transform: `translate(${b.x - b.w / 2},${b.y - b.h / 2})`}, scopesG);
        if (folded) {
          const inner = this.markedInside(id);
          el('rect', {class: 'box' + (inner ? ' has-marks' : ''), width: b.w, height: b.h, rx: 8, stroke: colour}, g);
          el('rect', {class: 'scope-stripe', width: 5, height: b.h - 8, x: 3, y: 4, rx: 2, fill: colour}, g);
          if (text) {
            el('text', {class: 'op', x: b.w / 2 + 2, y: 21}, g).textContent = '⊞ ' + clip(s.label, 22);
            el('text', {class: 'ns', x: b.w / 2 + 2, y: 38}, g).textContent = `${s.nodes} nodes`;
          }
        } else {
          el('rect', {class: 'frame', width: b.w, height: b.h, rx: 10, fill: colour, stroke: colour}, g);
          if (text) el('text', {class: 'title', x: 10, y: 17, fill: colour}, g).textContent = '⊟ ' + clip(s.label, Math.max(8, Math.floor(b.w / 7)));
        }
        el('title', {}, g).textContent = `${s.path}  (${s.nodes} nodes) — click ${folded ? 'to open' : 'the title to fold'}`;
        this.drawn.scopes++;
      }
      // Edges: each its own path (with its tensors on hover) when zoomed in,
      // one batched path when far out.
      const batch = [];
      for (const r of this.boxes.routes) {
        const p = r.points;
        let ex0 = Infinity, ex1 = -Infinity, ey0 = Infinity, ey1 = -Infinity;
        for (let i = 0; i < p.length; i += 2) {
          ex0 = Math.min(ex0, p[i]); ex1 = Math.max(ex1, p[i]); ey0 = Math.min(ey0, p[i + 1]); ey1 = Math.max(ey1, p[i + 1]);
        }
        if (ex1 < x0 || ex0 > x1 || ey1 < y0 || ey0 > y1) continue;
        const d = routePath(p);
        this.drawn.routes++;
        if (!detail) { batch.push(d); continue; }
        const fromId = r.from.node, toId = r.to.node;
        const lit = marked && fromId !== undefined && toId !== undefined && this.isMarked(fromId) && this.isMarked(toId);
        const path = el('path', {class: 'edge' + (lit ? ' lit' : ''), d, 'marker-end': `url(#arrow-${this.layer.name})`,
          'stroke-width': Math.min(4, 1.3 + Math.log2(r.weight)), 'data-from': fromId ?? 's' + r.from.scope, 'data-to': toId ?? 's' + r.to.scope}, edgesG);
        el('title', {}, path).textContent = this.edgeTitle(r);
      }
      if (batch.length) el('path', {class: 'edge batch', d: batch.join(' ')}, edgesG);
      const tiny = [];
      for (const [id, b] of this.boxes.nodes) {
        if (!inView(b)) continue;
        this.drawn.nodes++;
        if (!detail) { tiny.push(`M${b.x - b.w / 2},${b.y - b.h / 2}h${b.w}v${b.h}h${-b.w}z`); continue; }
        this.drawNode(nodesG, this.layer.byId.get(id), b, text);
      }
      if (tiny.length) el('path', {class: 'node-batch', d: tiny.join('')}, nodesG);
      if (this.showAttached && text) this.drawAttached(nodesG, edgesG, inView);
      this.svg.classList.toggle('has-marks', marked);
      this.viewport.replaceChildren(root);
      this.applyTransform();
      this.lastRenderMs = performance.now() - t0;
      this.drawMinimapView();
    }

    // Constant nodes on request: small boxes stacked left of the first
    // consumer that has a box, each with a line to it; not laid out.
    drawAttached(nodesG, edgesG, inView) {
      const stack = new Map();
      for (const n of this.attachedNodes) {
        const consumer = n.attached_to.find((id) => this.boxes.nodes.has(id));
        if (consumer === undefined) continue;
        const c = this.boxes.nodes.get(consumer), k = stack.get(consumer) || 0;
        stack.set(consumer, k + 1);
        const b = {x: c.x - c.w / 2 - 70, y: c.y - c.h / 2 + 9 + 21 * k, w: 110, h: 18};
        if (!inView(b)) continue;
        el('path', {class: 'edge attached', d: `M${b.x + b.w / 2},${b.y} L${c.x - c.w / 2},${c.y}`}, edgesG);
        const g = el('g', {class: 'node attached' + (this.selected.has(n.node_id) ? ' selected' : ''), 'data-node-id': n.node_id,
          'data-layer': this.layer.name, 'data-op-type': n.op_type, transform: `translate(${b.x - b.w / 2},${b.y - b.h / 2})`}, nodesG);
        el('rect', {class: 'box', width: b.w, height: b.h, rx: 4}, g);
        el('text', {class: 'ns', x: b.w / 2, y: 13}, g).textContent = clip(`${n.op_type} ${shortName(n, '')}`, 18);
        el('title', {}, g).textContent = `${n.name || '(unnamed)'}  [${n.op_type}, node ${n.node_id}], attached to node ${consumer}`;
        this.nodeEls.set(n.node_id, g);
      }
    }

    edgeTitle(r) {
      const vals = (r.values || []).map((name) => this.values.get(name)).filter(Boolean);
      if (!vals.length) return r.weight > 1 ? `${r.weight} tensors` : '';
      const lines = vals.slice(0, 6).map((v) => `${v.name}  ${shapeText(v)}`);
      if (vals.length > 6) lines.push(`… ${vals.length - 6} more`);
      return (r.weight > 1 ? `${r.weight} tensors\n` : '') + lines.join('\n');
    }

    isMarked(id) { return this.selected.has(id) || this.highlighted.has(id); }

    markedInside(scopeId) {
      for (const id of [...this.selected, ...this.highlighted]) {
        const n = this.layer.byId.get(id);
        if (n && n.scope !== undefined && this.boxes.hiddenBy[n.scope] === scopeId) return true;
      }
      return false;
    }

    drawNode(parent, n, b, text) {
      const state = nodeState(n);
      const classes = ['node', 'kind-' + n.kind, 'state-' + state];
      if (n.executed === false) classes.push('not-executed');  // the run's own word, kept for selectors
      if (n.executable === false) classes.push('not-executable');
      const badge = opscope.diffBadge && opscope.diffBadge(n.diff);  // against a baseline (diff_view.js)
      if (badge) classes.push(badge.cls);
      const band = opscope.accuracyBand && opscope.accuracyBand(n.accuracy);  // its own error (accuracy_view.js)
      if (band) classes.push(band);
      if (this.selected.has(n.node_id)) classes.push('selected');
      else if (this.highlighted.has(n.node_id)) classes.push('highlighted');
      const g = el('g', {class: classes.join(' '), 'data-node-id': n.node_id, 'data-layer': this.layer.name,
        'data-op-type': n.op_type, transform: `translate(${b.x - b.w / 2},${b.y - b.h / 2})`}, parent);
      el('rect', {class: 'box', width: b.w, height: b.h, rx: 6}, g);
      el('rect', {class: 'scope-stripe', width: 5, height: b.h - 8, x: 3, y: 4, rx: 2, fill: opscope.scopeColour(n.namespace)}, g);
      if (text) {
        const scope = this.index && n.scope !== undefined ? this.index.L.scopes[n.scope].path : '';
        el('text', {class: 'op', x: b.w / 2 + 2, y: 18}, g).textContent = clip(n.op_type, 20);
        el('text', {class: 'ns', x: b.w / 2 + 2, y: 34}, g).textContent = clip(shortName(n, scope), 24);
        if (state === 'not-executable') el('text', {class: 'badge', x: b.w - 8, y: 14}, g).textContent = '!';
        const weights = this.weightsOf(n);
        if (weights) el('text', {class: 'weights', x: b.w - 6, y: b.h - 5}, g).textContent = weights;
        if (badge) {
          // A pill on the top edge, over the box's border: it never covers the labels.
          const pill = el('g', {class: 'diff-badge', transform: 'translate(8,-8)'}, g);
          el('rect', {width: 7 * badge.text.length + 10, height: 14, rx: 7}, pill);
          el('text', {x: 5, y: 10.5}, pill).textContent = badge.text;
        }
      }
      const why = state === 'not-executable' ? '\nnot executable: ' + (n.not_executable_reason || '')
        : state === 'fused-away' ? '\nfused into compiled node ' + n.compiled_node_id
          : n.executed === false ? '\nnot executed: ' + (n.reason || '') : '';
      el('title', {}, g).textContent = `${n.name || '(unnamed)'}  [${n.op_type}, node ${n.node_id}]${why}` +
        (badge ? '\nvs baseline: ' + badge.text : '');
      this.nodeEls.set(n.node_id, g);
    }

    // "W" with a count when the node reads constants (initializers, or
    // attached Constant nodes): they are listed in its details.
    weightsOf(n) {
      const count = (n.inputs || []).filter((t) => {
        const v = this.values.get(t.name);
        return v && v.constant;
      }).length;
      return count ? `${count}W` : '';
    }

    applyTransform() {
      const v = this.view;
      this.viewport.setAttribute('transform', `translate(${v.tx},${v.ty}) scale(${v.scale})`);
    }

    bounds() {
      const b = this.boxes;
      if (!b.nodes.size && !b.scopes.size) return {x0: 0, y0: 0, x1: 1, y1: 1};
      return {x0: 0, y0: 0, x1: b.width || 1, y1: b.height || 1};
    }

    // The opening view: the whole layer when it fits at a readable size,
    // else its top at a scale where labels read (the minimap shows the rest).
    fit() {
      const b = this.bounds(), w = this.host.clientWidth || 400, h = this.host.clientHeight || 300, pad = 16;
      const widthFit = (w - 2 * pad) / (b.x1 - b.x0), heightFit = (h - 2 * pad) / (b.y1 - b.y0);
      const whole = Math.min(widthFit, heightFit);
      // 0.8 keeps the 13 px op labels above 10 px on screen.
      const scale = Math.min(1.1, whole >= 0.8 ? whole : Math.max(0.8, Math.min(widthFit, 1)));
      const tx = scale * (b.x1 - b.x0) + 2 * pad <= w ? w / 2 - scale * (b.x0 + b.x1) / 2 : pad - scale * b.x0;
      const ty = scale * (b.y1 - b.y0) + 2 * pad <= h ? h / 2 - scale * (b.y0 + b.y1) / 2 : pad - scale * b.y0;
      this.setView({scale, tx, ty}, true);
    }

    setView(v, now = false) {
      this.view = v;
      this.applyTransform();  // the old drawing moves at once; the new one follows within a frame
      if (now) this.renderNow();
      else this.redraw();
    }

    centerOn(nodeId) {
      this.unfoldTo(nodeId);
      const b = this.visibleBoxOf(nodeId);
      if (!b) return;
      const w = this.host.clientWidth, h = this.host.clientHeight, scale = Math.max(this.view.scale, 0.8);
      this.setView({scale, tx: w / 2 - scale * b.x, ty: h / 2 - scale * b.y}, true);
    }

    // Shows a node if it is out of view, without changing the zoom.
    reveal(nodeId) {
      const b = this.visibleBoxOf(nodeId);
      if (!b) return;
      const v = this.view, w = this.host.clientWidth, h = this.host.clientHeight;
      const sx = v.tx + v.scale * b.x, sy = v.ty + v.scale * b.y;
      if (sx < 0 || sx > w || sy < 0 || sy > h) this.setView({scale: v.scale, tx: w / 2 - v.scale * b.x, ty: h / 2 - v.scale * b.y}, true);
    }

    // selected / highlighted: Sets of node ids of this layer.
    setMarks(selected, highlighted) {
      this.selected = new Set(selected);
      this.highlighted = new Set([...highlighted].filter((id) => !selected.has(id)));
      this.renderNow();
    }

    drawMinimap() {
      const c = this.minimap, b = this.boxes, W = 160, H = 110;
      const scale = Math.min(W / (b.width || 1), H / (b.height || 1));
      c.width = Math.max(20, Math.ceil((b.width || 1) * scale)); c.height = Math.max(20, Math.ceil((b.height || 1) * scale));
      this.miniScale = scale;
      const ctx = c.getContext('2d');
      ctx.clearRect(0, 0, c.width, c.height);
      const base = document.createElement('canvas');
      base.width = c.width; base.height = c.height;
      const bx = base.getContext('2d');
      for (const [id, s] of b.scopes) {
        bx.fillStyle = this.folded.has(id) ? '#ced4da' : 'rgba(78,121,167,0.10)';
        bx.fillRect((s.x - s.w / 2) * scale, (s.y - s.h / 2) * scale, Math.max(1, s.w * scale), Math.max(1, s.h * scale));
      }
      bx.fillStyle = '#868e96';
      for (const n of b.nodes.values()) bx.fillRect((n.x - n.w / 2) * scale, (n.y - n.h / 2) * scale, Math.max(1, n.w * scale), Math.max(1, n.h * scale));
      this.minimapBase = base;
      c.classList.toggle('hidden', (b.width || 0) * this.view.scale < (this.host.clientWidth || 400) && (b.height || 0) * this.view.scale < (this.host.clientHeight || 300));
      this.drawMinimapView();
    }

    drawMinimapView() {
      const c = this.minimap, ctx = c.getContext('2d'), v = this.view, s = this.miniScale || 1;
      if (!this.minimapBase) return;
      const w = this.host.clientWidth || 400, h = this.host.clientHeight || 300;
      c.classList.toggle('hidden', (this.boxes.width || 0) * v.scale <= w && (this.boxes.height || 0) * v.scale <= h);
      ctx.clearRect(0, 0, c.width, c.height);
      ctx.drawImage(this.minimapBase, 0, 0);
      ctx.strokeStyle = '#e8590c';
      ctx.lineWidth = 1.5;
      ctx.strokeRect((-v.tx / v.scale) * s, (-v.ty / v.scale) * s, (w / v.scale) * s, (h / v.scale) * s);
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
        const scope = ev.target.closest('g.scope');
        if (scope && (scope.classList.contains('folded') || ev.target.closest('text.title') ||
            ev.offsetY - (scope.getBoundingClientRect().top - this.svg.getBoundingClientRect().top) < 26 * this.view.scale)) {
          this.toggleScope(+scope.dataset.scope);
          return;
        }
        const g = ev.target.closest('g.node');
        this.onSelect(g ? this.layer.byId.get(+g.dataset.nodeId) : null);
      });
      this.svg.addEventListener('dblclick', (ev) => {
        if (!ev.target.closest('g.node') && !ev.target.closest('g.scope')) this.fit();
      });
      // The minimap: a click or drag centres the view there.
      const jump = (ev) => {
        const r = this.minimap.getBoundingClientRect(), s = this.miniScale || 1, v = this.view;
        const gx = (ev.clientX - r.left) / s, gy = (ev.clientY - r.top) / s;
        this.setView({scale: v.scale, tx: this.host.clientWidth / 2 - v.scale * gx, ty: this.host.clientHeight / 2 - v.scale * gy});
      };
      let miniDrag = false;
      this.minimap.addEventListener('pointerdown', (ev) => { miniDrag = true; jump(ev); ev.stopPropagation(); });
      window.addEventListener('pointermove', (ev) => { if (miniDrag) jump(ev); });
      window.addEventListener('pointerup', () => { miniDrag = false; });
    }
  }

  const endKey = (r) => (r.from.node ?? 's' + r.from.scope) + '>' + (r.to.node ?? 's' + r.to.scope);

  function routePath(p) {
    if (p.length === 4) {
      const my = (p[1] + p[3]) / 2;
      return `M${p[0]},${p[1]} C${p[0]},${my} ${p[2]},${my} ${p[2]},${p[3]}`;
    }
    let d = `M${p[0]},${p[1]}`;
    for (let i = 2; i < p.length; i += 2) d += ` L${p[i]},${p[i + 1]}`;
    return d;
  }

  opscope.GraphView = GraphView;
})();
