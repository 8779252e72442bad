'use strict';
// graph_layout.js: boxes and edge routes of a graph layer for a fold state.
// The library (src/layout/) ranked and ordered every scope's slots, the
// expensive part, and placed the opening view; a fold or unfold only changes
// sizes, so the page re-places with the same steps as src/layout/place.cc
// (kept in step with it: the browser test checks both agree on the opening
// view): per scope, bottom-up, each rank fitted by isotonic least squares to
// its neighbours' mean, then frames made absolute top-down, then the edges
// routed through their dummies.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const ITEM = 0, SCOPE = 1, DUMMY = 2;

  // Weighted least squares to `want` under x[i] - x[i-1] >= sep[i]
  // (pool-adjacent-violators on want minus the running separation).
  function fitRank(want, weight, sep, x) {
    const n = want.length, offset = new Float64Array(n);
    for (let i = 1; i < n; ++i) offset[i] = offset[i - 1] + sep[i];
    const bw = [], bwt = [], bc = [];
    for (let i = 0; i < n; ++i) {
      bw.push(weight[i]); bwt.push(weight[i] * (want[i] - offset[i])); bc.push(1);
      while (bw.length >= 2) {
        const b = bw.length - 1, a = b - 1;
        if (bwt[a] / bw[a] <= bwt[b] / bw[b]) break;
        bw[a] += bw[b]; bwt[a] += bwt[b]; bc[a] += bc[b];
        bw.pop(); bwt.pop(); bc.pop();
      }
    }
    let i = 0;
    for (let b = 0; b < bw.length; ++b) for (let k = 0; k < bc[b]; ++k, ++i) x[i] = bwt[b] / bw[b] + offset[i];
  }

  function placeScope(scope, w, h, root, sp) {
    const slots = scope.slots, n = slots.length;
    const f = {x: new Float64Array(n), y0: new Float64Array(n), y1: new Float64Array(n), width: 0, height: 0};
    const up = Array.from({length: n}, () => []), down = Array.from({length: n}, () => []);
    for (const [from, to, , , dummies] of scope.edges) {
      let prev = from;
      for (const d of dummies) { down[prev].push(d); up[d].push(prev); prev = d; }
      down[prev].push(to); up[to].push(prev);
    }
    const ranks = [];
    slots.forEach(([, , rank, order], s) => { (ranks[rank] || (ranks[rank] = []))[order] = s; });
    const gap = (a, b) => (w[a] + w[b]) / 2 + (slots[a][0] === DUMMY || slots[b][0] === DUMMY ? sp.dummy_gap : sp.node_gap);
    const fit = (rank, sides) => {
      const m = rank.length, want = new Float64Array(m), weight = new Float64Array(m), sep = new Float64Array(m), x = new Float64Array(m);
      for (let k = 0; k < m; ++k) {
        const s = rank[k];
        let sum = 0, count = 0;
        for (const side of sides) for (const nb of side[s]) { sum += f.x[nb]; ++count; }
        want[k] = count ? sum / count : f.x[s];
        weight[k] = count ? count : 0.25;
        if (k > 0) sep[k] = gap(rank[k - 1], s);
      }
      fitRank(want, weight, sep, x);
      for (let k = 0; k < m; ++k) f.x[rank[k]] = x[k];
    };
    for (const rank of ranks) rank.forEach((s, k) => { f.x[s] = k === 0 ? 0 : f.x[rank[k - 1]] + gap(rank[k - 1], s); });
    for (let pass = 0; pass < 4; ++pass) {
      for (let r = 1; r < ranks.length; ++r) fit(ranks[r], [up]);
      for (let r = ranks.length - 2; r >= 0; --r) fit(ranks[r], [down]);
    }
    for (let r = 0; r < ranks.length; ++r) fit(ranks[r], [up, down]);
    let y = root ? sp.pad : sp.header + sp.pad, left = 0, right = 0, any = false;
    for (const rank of ranks) {
      let band = 0;
      for (const s of rank) band = Math.max(band, h[s]);
      for (const s of rank) {
        const dummy = slots[s][0] === DUMMY;
        f.y0[s] = y;
        f.y1[s] = dummy ? y + band : y + h[s];
        if (dummy) continue;
        left = any ? Math.min(left, f.x[s] - w[s] / 2) : f.x[s] - w[s] / 2;
        right = any ? Math.max(right, f.x[s] + w[s] / 2) : f.x[s] + w[s] / 2;
        any = true;
      }
      y += band + sp.rank_gap;
    }
    for (let i = 0; i < n; ++i) f.x[i] += sp.pad - left;
    f.width = right - left + 2 * sp.pad;
    f.height = y - sp.rank_gap + sp.pad;
    return f;
  }

  // The layer's scope tree, indexed once: depth, where each node and scope
  // sits among its parent's slots, each scope's edges by their two slots.
  opscope.indexLayout = function (layer) {
    const L = layer.graphLayout;
    if (!L) return null;
    const scopes = L.scopes, depth = new Int32Array(scopes.length), nodeSlot = new Map(), scopeSlot = new Int32Array(scopes.length);
    for (const s of scopes) {
      if (s.parent >= 0) depth[s.id] = depth[s.parent] + 1;  // parents come before children
      s.edgeAt = new Map(s.edges.map((e, i) => [e[0] + ':' + e[1], i]));
      s.slots.forEach(([kind, id], i) => {
        if (kind === ITEM) nodeSlot.set(id, i);
        else if (kind === SCOPE) scopeSlot[id] = i;
      });
    }
    const byDepth = scopes.map((s) => s.id).sort((a, b) => depth[b] - depth[a] || a - b);
    return {L, depth, nodeSlot, scopeSlot, byDepth};
  };

  // folded: a Set of scope ids. Returns {nodes: Map id -> box, scopes: Map
  // id -> box (visible ones), routes, width, height}; a box is {x, y, w, h},
  // x and y its centre.
  opscope.placeLayout = function (index, layer, folded) {
    const {L, depth, nodeSlot, scopeSlot, byDepth} = index, scopes = L.scopes, sp = L.spacing;
    const hiddenBy = new Int32Array(scopes.length).fill(-1);
    for (let k = byDepth.length - 1; k >= 0; --k) {
      const s = byDepth[k], p = scopes[s].parent;
      hiddenBy[s] = p >= 0 && hiddenBy[p] >= 0 ? hiddenBy[p] : s !== 0 && folded.has(s) ? s : -1;
    }
    const sw = new Float64Array(scopes.length), sh = new Float64Array(scopes.length), frames = [];
    for (const s of byDepth) {
      const sc = scopes[s];
      if (!sc.slots.length) continue;
      if (s !== 0 && folded.has(s)) { sw[s] = sp.folded_width; sh[s] = sp.folded_height; continue; }
      const w = new Float64Array(sc.slots.length), h = new Float64Array(sc.slots.length);
      sc.slots.forEach(([kind, id], i) => {
        if (kind === ITEM) { w[i] = L.node_width; h[i] = L.node_height; }
        else if (kind === SCOPE) { w[i] = sw[id]; h[i] = sh[id]; }
      });
      frames[s] = placeScope(sc, w, h, s === 0, sp);
      sw[s] = Math.max(frames[s].width, sp.folded_width);
      sh[s] = frames[s].height;
    }
    const nodes = new Map(), boxes = new Map(), ox = new Float64Array(scopes.length), oy = new Float64Array(scopes.length);
    for (let k = byDepth.length - 1; k >= 0; --k) {
      const s = byDepth[k];
      if (hiddenBy[s] >= 0 || !frames[s]) continue;
      const f = frames[s];
      scopes[s].slots.forEach(([kind, id], i) => {
        if (kind === DUMMY) return;
        const w = kind === ITEM ? L.node_width : sw[id], h = kind === ITEM ? L.node_height : sh[id];
        const b = {x: ox[s] + f.x[i], y: oy[s] + f.y0[i] + h / 2, w, h};
        if (kind === ITEM) nodes.set(id, b);
        else { boxes.set(id, b); ox[id] = b.x - w / 2; oy[id] = b.y - h / 2; }
      });
    }
    // Routes: one per pair of visible boxes, through the dummies of the edge
    // in the two items' lowest common scope.
    const routes = [], seen = new Map();
    const scopeOf = (id) => layer.byId.get(id).scope;
    for (const e of layer.edges) {
      const su = scopeOf(e.from), sv = scopeOf(e.to);
      if (su === undefined || sv === undefined) continue;
      const hu = hiddenBy[su], hv = hiddenBy[sv];
      const from = hu >= 0 ? {scope: hu} : {node: e.from}, to = hv >= 0 ? {scope: hv} : {node: e.to};
      const key = (hu >= 0 ? 's' + hu : e.from) + '>' + (hv >= 0 ? 's' + hv : e.to);
      if (hu >= 0 && hu === hv) continue;
      if (seen.has(key)) { const r = routes[seen.get(key)]; r.weight++; r.values.push(e.value); continue; }
      let a = su, b = sv, ca = -1, cb = -1;
      while (depth[a] > depth[b]) { ca = a; a = scopes[a].parent; }
      while (depth[b] > depth[a]) { cb = b; b = scopes[b].parent; }
      while (a !== b) { ca = a; a = scopes[a].parent; cb = b; b = scopes[b].parent; }
      const sa = ca < 0 ? nodeSlot.get(e.from) : scopeSlot[ca], sb = cb < 0 ? nodeSlot.get(e.to) : scopeSlot[cb];
      const A = from.scope !== undefined ? boxes.get(from.scope) : nodes.get(from.node);
      const B = to.scope !== undefined ? boxes.get(to.scope) : nodes.get(to.node);
      if (!A || !B) continue;
      const downward = sa < sb, lca = scopes[a], f = frames[a];
      const points = [A.x, downward ? A.y + A.h / 2 : A.y - A.h / 2];
      const ei = lca.edgeAt.get(Math.min(sa, sb) + ':' + Math.max(sa, sb));
      if (ei !== undefined && f) {
        const dummies = lca.edges[ei][4], list = downward ? dummies : [...dummies].reverse();
        for (const d of list) {
          const y0 = oy[a] + f.y0[d], y1 = oy[a] + f.y1[d], x = ox[a] + f.x[d];
          points.push(x, downward ? y0 : y1, x, downward ? y1 : y0);
        }
      }
      points.push(B.x, downward ? B.y - B.h / 2 : B.y + B.h / 2);
      seen.set(key, routes.length);
      routes.push({from, to, weight: 1, values: [e.value], points});
    }
    spreadPorts(routes, (end) => (end.scope !== undefined ? boxes.get(end.scope) : nodes.get(end.node)));
    return {nodes, scopes: boxes, routes, width: sw[0], height: sh[0], hiddenBy};
  };

  // The library's SpreadPorts (src/layout/place.cc): the routes on one side
  // of a box spread along it in the order of where they head, on the same
  // 1/64-px grid, so that a fold re-places them as the library would.
  function spreadPorts(routes, boxOf) {
    const sides = new Map(), grid = (v) => Math.floor(v * 64);
    const add = (end, bottom, e) => {
      const key = (end.scope !== undefined ? 's' + end.scope : end.node) + (bottom ? 'b' : 't');
      (sides.get(key) || sides.set(key, {box: boxOf(end), ends: []}).get(key)).ends.push(e);
    };
    routes.forEach((r, i) => {
      const p = r.points, n = p.length;
      add(r.from, p[1] > boxOf(r.from).y, {i, at: 0, key: [p[2], p[n - 2], p[n - 1]].map(grid)});
      add(r.to, p[n - 1] > boxOf(r.to).y, {i, at: n - 2, key: [p[n - 4], p[0], p[1]].map(grid)});
    });
    for (const {box, ends} of sides.values()) {
      if (ends.length < 2) continue;
      ends.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2]);
      ends.forEach((e, k) => { routes[e.i].points[e.at] = box.x - box.w / 2 + (box.w * (k + 1)) / (ends.length + 1); });
    }
  }
})();
