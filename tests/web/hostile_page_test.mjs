// The page against a model whose names are attacks (tests/web/models/
// make_hostile_model.py: <img onerror>, <svg onload>, </script>, <style>,
// javascript:, U+2028/U+2029, in node names, tensor names and the names'
// first '/' segment, which the graph legend lists). report.html opened as a
// file, the page `inspector-cli serve` sends, and a page against a baseline
// of other hostile names: every payload sets window.pwned, so nothing may
// set it; no Content-Security-Policy violation (a blocked handler is one);
// no element the names spelled; every name shown as the text it is; no
// request off the box. Then a chart with CSS (hole 3): refused by export and
// by the page's own gate.
//
//   node tests/web/hostile_page_test.mjs BINARY_DIR SOURCE_DIR
//
// Missing chromium, node_modules or python3-onnx is a failure with the fix named, never a skip.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFile, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {browserEnv, startServe, readGraphJson} from './browser_env.mjs';

const {here, sourceDir, chromiumPath, cli, chromium, die} = await browserEnv('hostile_page_test', 'hostile_page_test.mjs');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile_page_test_'));
const runs = {};
let browser, page, launched;
// What the page did wrong since it was opened.
let problems = [], requests = [];

function inspector(args) {
  return new Promise((resolve, reject) => {
    execFile(cli, args, {encoding: 'utf8', timeout: 60_000}, (error, stdout, stderr) =>
      error ? reject(new Error(`inspector-cli ${args.join(' ')} failed: ${stderr || error.message}`)) : resolve(stdout));
  });
}

async function makeRun(name, model, exportArgs = []) {
  const dir = path.join(work, name);
  await inspector(['run', path.join(work, model), '--output-dir', dir]);
  return {dir, graph: readGraphJson(path.join(dir, 'graph.json')), exportArgs};
}

before(async () => {
  const py = spawnSync('/usr/bin/python3', [path.join(here, 'models/make_hostile_model.py'), work], {encoding: 'utf8'});
  if (py.status !== 0) die(`tests/web/models/make_hostile_model.py failed (python3-onnx installed? setup.sh installs it): ${py.stderr.slice(-600)}`);
  launched = chromium.launch({executablePath: chromiumPath, headless: true}).then(async (b) => {
    browser = b;
    page = await b.newPage({viewport: {width: 1400, height: 900}});
    // Injected by the browser ahead of the page's own scripts, outside its policy.
    await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`)));
    page.on('console', (m) => m.type() === 'error' && problems.push('console: ' + m.text()));
    page.on('pageerror', (e) => problems.push('page error: ' + e.message));
    page.on('dialog', (d) => (problems.push('dialog: ' + d.message()), d.dismiss()));
    page.on('request', (r) => requests.push(r.url()));
  });
  [runs.hostile, runs.base] = await Promise.all([makeRun('hostile', 'hostile.onnx'), makeRun('base', 'hostile_base.onnx'), launched]);
  // The same model again, against the baseline of other names: those are listed as removed, these as added.
  runs.vs = await makeRun('vs', 'hostile.onnx');
  await Promise.all([inspector(['export', '--input-dir', runs.hostile.dir, '--format', 'html']),
    inspector(['export', '--input-dir', runs.vs.dir, '--format', 'html', '--baseline', runs.base.dir, '--allow-different-models'])]);
});

after(async () => {
  // A failed run must not leave the browser it raced with open (the test would never end).
  await launched?.catch(() => {});
  if (browser) await browser.close();
  fs.rmSync(work, {recursive: true, force: true});
});

// The model's names and their top scopes, as the library wrote them.
function namesOf(run) {
  const names = run.graph.framework.nodes.map((n) => n.name);
  const scopes = [...new Set(names.filter((n) => n.startsWith('/')).map((n) => n.split('/')[1]))];
  assert.ok(scopes.some((s) => s.includes('<img')) && scopes.some((s) => s.includes('<svg')) &&
    scopes.some((s) => s.includes('\u2028')), 'the legend scopes carry the payloads: ' + scopes.join(' | '));
  assert.ok(names.some((n) => n.includes('</script>')) && names.some((n) => n.includes('<style>')));
  return {names, scopes};
}

async function open(url) {
  problems = [];
  requests = [];
  const response = await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 10_000});
  return response;
}

// Every name the page shows is text, and nothing the names spell ran or exists.
async function checkNothingRan(run, offBox) {
  const {names, scopes} = namesOf(run);
  // The legends open, and every node selected in turn: its details name it.
  await page.$$eval('details.graph-legend', (ds) => ds.forEach((d) => (d.open = true)));
  for (const name of names) {
    await page.evaluate((n) => {
      const node = opscope.app.model.layers.framework.nodes.find((x) => x.name === n);
      opscope.app.select({kind: 'node', node});
    }, name);
    assert.equal(await page.textContent('#details h3'), name);
  }
  const legend = await page.$$eval('#framework-graph .graph-legend .row', (rows) => rows.map((r) => r.textContent));
  for (const s of scopes) assert.ok(legend.includes('/' + s), `the legend shows /${s} as text: ${JSON.stringify(legend)}`);
  const titles = (await page.$$eval('#framework-graph g.node > title', (ts) => ts.map((t) => t.textContent))).join('\n');
  for (const name of names) assert.ok(titles.includes(name), `a node's tooltip names ${JSON.stringify(name)}`);

  // An image's error event comes after it fails to load: wait for every image to settle, then a task more.
  await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, {timeout: 10_000});
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
  assert.equal(await page.evaluate(() => window.pwned), undefined, 'a payload ran');
  const spelled = await page.evaluate(() => {
    const found = [];
    for (const e of document.querySelectorAll('*')) {
      for (const a of e.attributes) if (/^on/i.test(a.name)) found.push(`<${e.localName} ${a.name}>`);
      if (['img', 'iframe', 'object', 'embed', 'foreignObject'].includes(e.localName)) found.push(`<${e.localName}>`);
      // The run's JSON is data in a <script type="application/json">, which nothing runs.
      const runs = e.localName === 'style' || (e.localName === 'script' && e.type !== 'application/json');
      if (runs && /pwned|display:none/.test(e.textContent)) found.push(`<${e.localName}> of a payload`);
    }
    return found;
  });
  assert.deepEqual(spelled, [], 'elements the names spelled');
  assert.ok(await page.isVisible('#timeline-pane'), 'the page is not hidden');
  assert.deepEqual(problems, []);
  assert.deepEqual(requests.filter((u) => !offBox(u)), [], 'requests off the box');
}

const fileOrData = (u) => u.startsWith('file:') || u.startsWith('data:');

test('report.html of hostile names, opened as a file: nothing runs, every name is text', async () => {
  const run = runs.hostile;
  await open(pathToFileURL(path.join(run.dir, 'report.html')).href);
  const policy = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(policy, /default-src 'none'/);
  assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
  await checkNothingRan(run, fileOrData);
});

test('the served page of hostile names: its policy header, nothing runs', async () => {
  const run = runs.hostile;
  const {server, exited, address} = startServe(cli, run.dir);
  try {
    const {url: base} = await address;
    const response = await open(base);
    const policy = response.headers()['content-security-policy'] || '';
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /script-src 'self'/);
    assert.match(policy, /connect-src 'self'/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    await checkNothingRan(run, (u) => u.startsWith(base) || u.startsWith('data:'));
  } finally {
    server.kill('SIGINT');
  }
  assert.deepEqual(await exited, {code: 0, signal: null});
});

test('against a baseline of other hostile names: the diff lists them as text, nothing runs', async () => {
  const {vs, base} = runs;
  await open(pathToFileURL(path.join(vs.dir, 'report.html')).href);
  assert.ok(await page.isVisible('#diff-section'));
  const listed = async (selector) => (await page.$$eval(selector, (es) => es.map((e) => e.textContent))).sort();
  assert.deepEqual(await listed('#diff .diff-removed[data-layer="framework"] .removed'), namesOf(base).names.sort());
  assert.deepEqual(await listed('#diff .diff-added[data-layer="framework"] a'), namesOf(vs).names.sort());
  await checkNothingRan(vs, fileOrData);
});

// Hole 3: a chart's <style> fetched a stylesheet when the file:// page opened
// (@import) and could hide the page. Export refuses it, naming it; the page's
// own gate (a chart picked from disk) refuses it too.
test('a roofline chart with CSS is refused by export and by the page', async () => {
  const dir = path.join(work, 'styled');
  fs.cpSync(runs.hostile.dir, dir, {recursive: true});
  const chart = fs.readFileSync(path.join(dir, 'roofline.svg'), 'utf8');
  const styled = chart.replace(/(<svg[^>]*>)/, '$1<style>@import url(http://127.0.0.1:9/x.css); body>*{display:none}</style>');
  assert.notEqual(styled, chart);
  fs.writeFileSync(path.join(dir, 'roofline.svg'), styled);
  fs.rmSync(path.join(dir, 'report.html'));
  const r = spawnSync(cli, ['export', '--input-dir', dir, '--format', 'html'], {encoding: 'utf8', timeout: 60_000});
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /roofline chart refused: <style>/);
  assert.ok(!fs.existsSync(path.join(dir, 'report.html')));

  problems = [];
  requests = [];
  await page.goto(pathToFileURL(path.join(sourceDir, 'web', 'index.html')).href);
  const styledFile = path.join(work, 'styled.svg');
  fs.writeFileSync(styledFile, styled);
  await page.setInputFiles('#load-files', [path.join(dir, 'trace.json'), styledFile]);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 10_000});
  assert.match(await page.textContent('#roofline'), /roofline\.svg refused: <style> is not allowed/);
  assert.equal(await page.locator('#roofline svg').count(), 0);
  assert.ok(await page.isVisible('#timeline-pane'));
  assert.deepEqual(requests.filter((u) => !fileOrData(u)), []);
  assert.deepEqual(problems, []);
});

// A copy of the base run whose graph.json `mutate` changed (read by
// `read`), exported and opened: no error, and framework nodes drawn.
async function openMisshapenGraph(name, read, mutate) {
  const dir = path.join(work, name);
  fs.cpSync(runs.base.dir, dir, {recursive: true});
  const g = read(path.join(dir, 'graph.json'));
  mutate(g);
  fs.writeFileSync(path.join(dir, 'graph.json'), JSON.stringify(g));
  fs.rmSync(path.join(dir, 'report.html'), {force: true});
  await inspector(['export', '--input-dir', dir, '--format', 'html']);
  problems = [];
  requests = [];
  await page.goto(pathToFileURL(path.join(dir, 'report.html')).href);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 30_000});
  assert.ok(await page.locator('#framework-graph g.node').count() > 0, 'the well-formed nodes are drawn');
  assert.deepEqual(problems, []);
}

// graph.json is a file people send each other: members of the wrong type
// (a node that is null or a number, tensors that are numbers or an object,
// values that are not objects) draw what they can and never throw.
test('a graph.json of wrong-typed members: the page opens without an error', () =>
  openMisshapenGraph('misshapen', readGraphJson, (g) => {
    g.framework.nodes.push(null, 7, {node_id: 'x', name: 5, inputs: 3, outputs: [null, 4, {name: 9}], executed: 'no'});
    g.framework.values.push(null, 'v', [1]);
    g.compiled.nodes[0].inputs = {0: 'x'};
  }));

// The same for version 3's columns (web/graph_rows.js): columns that are
// short, of the wrong type or point past their tables leave those members
// out; the page still opens and draws the nodes that have what it needs.
test('a graph.json of misshapen columns: the page opens without an error', () =>
  openMisshapenGraph('misshapen-columns', (file) => JSON.parse(fs.readFileSync(file, 'utf8')), (g) => {
    assert.equal(g.schema, 'opscope.graph/3');
    const fw = g.framework.nodes, last = fw.node_id_steps.length - 1;
    fw.op_type[0] = 999;                 // past the table
    fw.inputs[0] = [123456, 'not-a-value', {x: 1}, null];
    fw.outputs = 'no';
    fw.name.length = last;               // short: the last node has no name
    fw.executed[1] = 'no';
    g.framework.extra[last] = 5;         // not an object
    g.framework.extra.x = {reason: 7};   // not a node's index
    g.framework.tables.op_types = {};
    g.framework.values.shape = 3;
    g.compiled.values.name = [null, 4];
    g.compiled.layout.scopes.slots = [[0, 'a', 1]];
    g.compiled.layout.routes.from = 'x';
  }));
