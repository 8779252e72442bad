// The graph view on real and large models, in Debian's chromium (headless,
// playwright-core): a PyTorch export the test makes (its Constant nodes
// attached to their consumers, a readable opening zoom, a scope folded and
// unfolded, weights in the details, tensors on edges), the page's own
// placement against the library's, and a generated 10,000-node model (time
// to interactive and a pan and a zoom step, measured and printed; what the
// DOM holds bounded by what is on screen). Screenshots go to
// BINARY_DIR/web-screenshots/ for a person to look at.
//
//   node tests/web/graph_view_test.mjs BINARY_DIR SOURCE_DIR
//
// Missing chromium, node_modules or python3-torch is a failure with the fix named, never a skip.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {browserEnv, readGraphJson} from './browser_env.mjs';
import {fileURLToPath, pathToFileURL} from 'node:url';

const {here, binaryDir, sourceDir, chromiumPath, cli, chromium, die} = await browserEnv('graph_view_test', 'graph_view_test.mjs');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'graph_view_test_'));
const shots = path.join(binaryDir, 'web-screenshots');
fs.mkdirSync(shots, {recursive: true});
let browser, page;
const runs = {};

function run(cmd, args) {
  const r = spawnSync(cmd, args, {encoding: 'utf8', timeout: 300_000});
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

function makeRun(name, model) {
  const dir = path.join(work, name);
  run(cli, ['run', model, '--output-dir', dir]);
  run(cli, ['export', '--input-dir', dir, '--format', 'html']);
  return {dir, graph: readGraphJson(path.join(dir, 'graph.json')),
    html: path.join(dir, 'report.html')};
}

async function open(r) {
  const problems = [];
  page.removeAllListeners('console');
  page.removeAllListeners('pageerror');
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  const t0 = Date.now();
  await page.goto(pathToFileURL(r.html).href);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 60_000});
  return {problems, readyMs: Date.now() - t0};
}

before(async () => {
  const torchModel = path.join(work, 'torch_net.onnx');
  const py = spawnSync('/usr/bin/python3', [path.join(here, 'models/make_torch_model.py'), torchModel], {encoding: 'utf8'});
  if (py.status !== 0) die(`tests/web/models/make_torch_model.py failed (python3-torch installed? setup.sh installs it): ${py.stderr.slice(-600)}`);
  runs.torch = makeRun('torch', torchModel);
  const big = path.join(work, 'synthetic_10000.onnx');
  run('/usr/bin/python3', [path.join(sourceDir, 'examples/models/make_synthetic.py'), '10000', big]);
  runs.big = makeRun('big', big);
  browser = await chromium.launch({executablePath: chromiumPath, args: ['--no-sandbox']});
  page = await browser.newPage({viewport: {width: 1500, height: 950}});
  // What the page's Content-Security-Policy blocks is an error the tests see.
  await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) =>
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`)));
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, {recursive: true, force: true});
});

test('a PyTorch export: constants attached, readable at open, scopes fold', async () => {
  const {graph} = runs.torch;
  const fw = graph.framework;
  const constants = fw.nodes.filter((n) => n.op_type === 'Constant');
  assert.ok(constants.length >= 3, 'the export has Constant nodes');
  for (const c of constants) assert.ok(Array.isArray(c.attached_to) && c.attached_to.length > 0, `${c.name} is attached`);
  const {problems} = await open(runs.torch);
  assert.equal(await page.locator('#framework-graph g.node[data-op-type="Constant"]').count(), 0, 'no Constant is drawn');
  // Not a top row of constants: the first rank of the drawn graph holds what reads the image.
  const ys = await page.$$eval('#framework-graph g.node', (els) => els.map((e) => e.getBoundingClientRect().top));
  const top = Math.min(...ys);
  assert.ok(ys.filter((y) => Math.abs(y - top) < 2).length <= 2, 'at most two boxes on the top row');
  // Readable: the op labels are drawn at 9 px or more on screen.
  const fontPx = await page.$eval('#framework-graph g.node text.op', (t) => t.getBoundingClientRect().height);
  console.log(`torch export: ${fw.nodes.length} nodes, ${constants.length} Constants attached, op labels ${fontPx.toFixed(1)} px high at open`);
  assert.ok(fontPx >= 9, `op labels ${fontPx} px high`);
  // Edges tell their tensor's dtype and shape.
  const titles = await page.$$eval('#framework-graph path.edge title', (ts) => ts.map((t) => t.textContent));
  assert.ok(titles.some((t) => /float32\[1,\d+/.test(t)), titles.slice(0, 3).join(' | '));
  // A conv's details list its weights apart from its input.
  const conv = fw.nodes.find((n) => n.op_type === 'Conv');
  await page.click(`#framework-graph g.node[data-node-id="${conv.node_id}"]`);
  const details = await page.textContent('#details');
  assert.match(details, /weights/);
  // graph.json names a node's tensors (version 1 wrote {name, dtype, shape}).
  const weight = conv.inputs[1];
  assert.ok(details.includes(typeof weight === 'string' ? weight : weight.name), 'the weight is named');
  await page.screenshot({path: path.join(shots, 'graph-torch-open.png')});

  // Fold the first frame by its title, then open it again.
  const onScreen = await ids(page, '#framework-graph g.scope:not(.folded)', 'data-scope');
  const scope = fw.layout.scopes.find((s) => onScreen.includes(s.id) && s.nodes >= 3);
  assert.ok(scope, `a frame of three or more nodes is on screen (frames: ${onScreen})`);
  const before = await page.locator('#framework-graph g.node').count();
  await page.click(`#framework-graph g.scope[data-scope="${scope.id}"] text.title`);
  await page.waitForSelector(`#framework-graph g.scope.folded[data-scope="${scope.id}"]`);
  const inside = fw.nodes.filter((n) => n.scope !== undefined && isInside(fw.layout.scopes, n.scope, scope.id)).map((n) => n.node_id);
  const shown = await ids(page, '#framework-graph g.node', 'data-node-id');
  assert.deepEqual(shown.filter((id) => inside.includes(id)), [], 'no node of the folded scope is drawn');
  assert.ok(shown.length > 0);
  assert.match(await page.textContent(`#framework-graph g.scope.folded[data-scope="${scope.id}"]`), new RegExp(`${scope.nodes} nodes`));
  await page.screenshot({path: path.join(shots, 'graph-torch-folded.png')});
  await page.click(`#framework-graph g.scope.folded[data-scope="${scope.id}"]`);
  await page.waitForSelector(`#framework-graph g.scope[data-scope="${scope.id}"]:not(.folded)`);
  assert.equal(await page.locator('#framework-graph g.node').count(), before);
  assert.deepEqual(problems, []);
});

const ids = (page, selector, attr) => page.$$eval(selector, (els, a) => els.map((e) => Number(e.getAttribute(a))), attr);

function isInside(scopes, s, ancestor) {
  for (; s >= 0; s = scopes[s].parent) if (s === ancestor) return true;
  return false;
}

// The page re-places after a fold with its own copy of the library's
// placement: on the opening fold state both must give the same boxes.
test('the page places the opening view exactly as the library did', async () => {
  for (const r of [runs.torch, runs.big]) {
    await open(r);
    const worst = await page.evaluate(() => {
      let worst = 0, checked = 0;
      for (const name of ['framework', 'compiled']) {
        const layer = opscope.app.model.layers[name];
        const folded = new Set(layer.graphLayout.scopes.filter((s) => s.folded).map((s) => s.id));
        const placed = opscope.placeLayout(opscope.indexLayout(layer), layer, folded);
        for (const n of layer.nodes) {
          if (!n.pos || n.pos.x === undefined) continue;
          const b = placed.nodes.get(n.node_id);
          if (!b) return {missing: n.node_id};
          worst = Math.max(worst, Math.abs(b.x - n.pos.x), Math.abs(b.y - n.pos.y));
          ++checked;
        }
        for (const s of layer.graphLayout.scopes) {
          if (!s.box || s.id === 0) continue;
          const b = placed.scopes.get(s.id);
          if (!b) return {missingScope: s.id};
          worst = Math.max(worst, Math.abs(b.x - s.box[0]), Math.abs(b.y - s.box[1]), Math.abs(b.w - s.box[2]));
          ++checked;
        }
        // And the same routes, each through the same bends from the same ports.
        const key = (r) => (r.from.node ?? 's' + r.from.scope) + '>' + (r.to.node ?? 's' + r.to.scope);
        const mine = new Map(placed.routes.map((r) => [key(r), r.points]));
        if (mine.size !== layer.graphLayout.routes.length) return {routes: [mine.size, layer.graphLayout.routes.length]};
        for (const r of layer.graphLayout.routes) {
          const p = mine.get(key(r));
          if (!p || p.length !== r.points.length) return {route: key(r)};
          for (let i = 0; i < p.length; ++i) worst = Math.max(worst, Math.abs(p[i] - r.points[i]));
          ++checked;
        }
      }
      return {worst, checked};
    });
    assert.equal(worst.missing, undefined, `node ${worst.missing} has no box in the page's placement`);
    assert.equal(worst.missingScope, undefined, `scope ${worst.missingScope} has no box in the page's placement`);
    assert.equal(worst.routes, undefined, `the page has ${worst.routes?.[0]} routes, the library ${worst.routes?.[1]}`);
    assert.equal(worst.route, undefined, `route ${worst.route} differs in its bends`);
    assert.ok(worst.checked > 0);
    assert.ok(worst.worst < 0.5, `largest difference ${worst.worst} px`);
  }
});

test('10,000 nodes: interactive, the DOM holds what is on screen, pan and zoom answer', async () => {
  const {graph, html} = runs.big;
  const size = fs.statSync(html).size;
  const {problems, readyMs} = await open(runs.big);
  const drawnNodes = graph.framework.nodes.filter((n) => n.scope !== undefined).length;
  const dom = await page.$$eval('#framework-graph svg *', (els) => els.length);
  // One frame, measured from the input to the end of the redraw it asks for.
  const step = (kind, sign) => page.evaluate(([kind, sign]) => new Promise((resolve) => {
    const view = opscope.app.graphs.framework, svg = document.querySelector('#framework-graph svg');
    const r = svg.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    const t0 = performance.now();
    if (kind === 'zoom') svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -240 * sign, clientX: x, clientY: y, bubbles: true, cancelable: true}));
    else {
      svg.dispatchEvent(new PointerEvent('pointerdown', {button: 0, clientX: x, clientY: y, bubbles: true}));
      window.dispatchEvent(new PointerEvent('pointermove', {clientX: x, clientY: y - 300 * sign, bubbles: true}));
      window.dispatchEvent(new PointerEvent('pointerup', {clientX: x, clientY: y - 300 * sign, bubbles: true}));
    }
    requestAnimationFrame(() => requestAnimationFrame(() => resolve({ms: performance.now() - t0, render: view.lastRenderMs, drawn: view.drawn})));
  }), [kind, sign]);
  const pans = [], zooms = [];
  for (let i = 0; i < 5; ++i) {
    // Back and forth, so the view stays on the graph.
    pans.push(await step('pan', i % 2 ? -1 : 1));
    zooms.push(await step('zoom', i % 2 ? -1 : 1));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`10k nodes: report.html ${(size / 1e6).toFixed(1)} MB, interactive in ${readyMs} ms, ` +
    `${dom} SVG elements for ${drawnNodes} drawn nodes; pan step ${median(pans.map((p) => p.ms)).toFixed(1)} ms ` +
    `(redraw ${median(pans.map((p) => p.render)).toFixed(1)} ms), zoom step ${median(zooms.map((p) => p.ms)).toFixed(1)} ms`);
  // The graph's data (over 1 MiB) is in gzipped and the page inflated it:
  // 1.7 MB for the page, 9.1 MB before.
  assert.equal(await page.$eval('[id="opscope-data-graph.json"]', (e) => e.dataset.encoding), 'gzip+base64');
  assert.ok(size < 3e6, `report.html is ${size} bytes`);
  assert.ok(drawnNodes >= 9000);
  assert.ok(dom < 6000, `${dom} SVG elements: only what is on screen should be there`);
  assert.ok(zooms.every((z) => z.drawn.nodes + z.drawn.scopes > 0), 'every step drew something');
  // Every folded scope's box says how many nodes it holds.
  const folded = await page.locator('#framework-graph g.scope.folded').count();
  assert.ok(folded > 0, 'a 10,000-node model opens with scopes folded');
  await page.screenshot({path: path.join(shots, 'graph-10k.png')});

  // Every scope open: 10,000 boxes placed by the page, the DOM still bounded
  // by the screen, and zoomed far out one batched path instead of 10,000.
  const opened = await page.evaluate(() => {
    const view = opscope.app.graphs.framework, t0 = performance.now();
    view.folded.clear();
    view.place(true);
    view.renderNow();
    return {ms: performance.now() - t0, boxes: view.boxes.nodes.size};
  });
  assert.equal(opened.boxes, drawnNodes);
  const openDom = await page.$$eval('#framework-graph svg *', (els) => els.length);
  const openPans = [];
  for (let i = 0; i < 5; ++i) openPans.push(await step('pan', i % 2 ? -1 : 1));
  await page.evaluate(() => {
    const view = opscope.app.graphs.framework;
    view.setView({scale: 0.03, tx: 0, ty: 0}, true);
  });
  const far = await page.evaluate(() => ({dom: document.querySelectorAll('#framework-graph svg *').length,
    batched: document.querySelectorAll('#framework-graph path.node-batch').length, drawn: opscope.app.graphs.framework.drawn}));
  console.log(`10k nodes, all scopes open: placed in ${opened.ms.toFixed(0)} ms, ${openDom} SVG elements, pan step ` +
    `${median(openPans.map((p) => p.ms)).toFixed(1)} ms; at 3 % zoom ${far.drawn.nodes} nodes in ${far.dom} elements`);
  assert.ok(openDom < 6000, `${openDom} SVG elements with every scope open`);
  assert.equal(far.batched, 1);
  assert.ok(far.drawn.nodes > 200 && far.dom < far.drawn.nodes, JSON.stringify(far));  // fewer elements than nodes: batched
  await page.screenshot({path: path.join(shots, 'graph-10k-open-far.png')});
  assert.deepEqual(problems, []);
});
