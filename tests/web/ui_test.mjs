// The inspector web UI in a real browser (Debian's chromium, headless, driven
// by playwright-core): report.html from `export --format html` opened as a
// file, then the same page from `inspector-cli serve`. Every expected number
// is read from the run's own graph.json / trace.json / summary.json. Then the
// same UI on a trace alone: the hand-written ops-debug profile in
// tests/web/timeline/ (timeline.json and roofline.svg), as a report, served,
// and picked in the page without data. Then a diagnosis: the hand-written
// crashed run in tests/web/diagnosis/ (its trajectory on the timeline, the
// failing launch marked and selected, the causes in order), and the page
// ops-debug diagnose writes beside a real diagnosis.json.
//
//   node tests/web/ui_test.mjs BINARY_DIR SOURCE_DIR
//
// Missing chromium or node_modules is a failure with the fix named, never a skip.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFile, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {browserEnv, startServe, readGraphJson} from './browser_env.mjs';
import {fileURLToPath, pathToFileURL} from 'node:url';

const {here, binaryDir, sourceDir, chromiumPath, cli, chromium, die} = await browserEnv('web_ui_test', 'ui_test.mjs');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'web_ui_test_'));
const runs = {};
let browser;

function inspector(args, expectCode = 0) {
  const r = spawnSync(cli, args, {encoding: 'utf8', timeout: 60_000});
  assert.equal(r.status, expectCode, `inspector-cli ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

// The same, without blocking: the runs and the browser start side by side.
function inspectorAsync(args) {
  return new Promise((resolve, reject) => {
    execFile(cli, args, {encoding: 'utf8', timeout: 60_000}, (error, stdout, stderr) =>
      error ? reject(new Error(`inspector-cli ${args.join(' ')} failed: ${stderr || error.message}`)) : resolve({stdout, stderr}));
  });
}

function readRun(dir) {
  const json = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const graph = readGraphJson(path.join(dir, 'graph.json')), trace = json('trace.json'), summary = json('summary.json');
  const events = trace.traceEvents;
  const tasks = events.filter((e) => e.ph === 'X');
  const threads = events.filter((e) => e.ph === 'M' && e.name === 'thread_name');
  return {dir, graph, trace, summary, tasks, threads, capture: fs.readFileSync(path.join(dir, 'capture.json'), 'utf8')};
}

async function makeRun(name, model, extra) {
  const dir = path.join(work, name);
  await inspectorAsync(['run', path.join(sourceDir, 'examples/models', model), '--output-dir', dir, ...extra]);
  const r = await inspectorAsync(['export', '--input-dir', dir, '--format', 'html']);
  assert.match(r.stdout, /wrote .*report\.html/);
  return readRun(dir);
}

// One page for every check (a new renderer per page costs seconds on a busy
// machine); each open starts a fresh list of console and page errors.
let page;
let problems = [];
async function openPage(url) {
  problems = [];
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 10_000});
  return {page, problems};
}

const ids = (page, selector, attr) =>
  page.$$eval(selector, (els, a) => els.map((e) => Number(e.getAttribute(a))), attr);
const sorted = (xs) => [...xs].sort((a, b) => a - b);

// The timeline draws on one canvas: what it shows is read through its test
// hook (web/timeline_view.js), once the frame asked for is drawn. A task's
// box is where it is drawn, in page coordinates; the page's own hit testing
// decides what a click at its centre picks.
// A click asks for a frame and returns before it is drawn: every read waits
// for it, or it reads the frame of the click before.
const drawn = (page) =>
  page.waitForFunction(() => opscope.app.timeline.last && !opscope.app.timeline.pending, null, {timeout: 10_000});
async function timelineTasks(page) {
  await drawn(page);
  return page.evaluate(() => opscope.app.timeline.testTasks());
}
const drawnTasks = async (page, pred = () => true) => (await timelineTasks(page)).filter((t) => t.box && pred(t));
const marked = async (page, cls, key) => (await drawnTasks(page, (t) => t.classes.includes(cls))).map((t) => t[key]);
const timelineLanes = (page) => page.evaluate(() => opscope.app.timeline.testLanes());
const timelineFrame = async (page) => (await drawn(page), page.evaluate(() => opscope.app.timeline.lastFrame()));
async function taskCentre(page, pred) {
  const t = (await drawnTasks(page)).find(pred);
  assert.ok(t, 'the task is drawn');
  return [(t.box.x0 + t.box.x1) / 2, (t.box.y0 + t.box.y1) / 2];
}
const clickTask = async (page, pred) => page.mouse.click(...(await taskCentre(page, pred)));
const hoverTask = async (page, pred) => page.mouse.move(...(await taskCentre(page, pred)));

// The page keeps only what is on screen in the DOM: zoomed out to the
// whole layer (boxes still drawn one by one at that size), every node is there.
const showWholeGraphs = (page) => page.evaluate(() => {
  for (const g of Object.values(opscope.app.graphs)) {
    const w = g.host.clientWidth, h = g.host.clientHeight, b = g.bounds();
    const scale = Math.min(w / (b.x1 - b.x0), h / (b.y1 - b.y0));
    g.setView({scale, tx: w / 2 - scale * (b.x0 + b.x1) / 2, ty: h / 2 - scale * (b.y0 + b.y1) / 2}, true);
  }
});

// Everything the page must show and do, against one run's files; `full:
// false` stops after the drawing and the linking (the served page is the same
// page, already checked in full as a file).
async function checkPage(page, run, {full = true} = {}) {
  const {graph, summary, tasks, threads} = run;
  // What is drawn is what the files hold.
  // Every node the layout places (Constant nodes are attached to their consumers instead).
  const drawn = (layer) => graph[layer].nodes.filter((n) => n.scope !== undefined);
  assert.ok(drawn('framework').length > 0);
  await showWholeGraphs(page);
  assert.equal(await page.locator('#framework-graph g.node').count(), drawn('framework').length);
  assert.equal(await page.locator('#compiled-graph g.node').count(), drawn('compiled').length);
  assert.equal((await timelineLanes(page)).length, threads.length);
  assert.equal(threads.length, summary.streams.length, 'one lane per stream of summary.json');
  assert.equal((await drawnTasks(page)).length, tasks.length);
  assert.equal(await page.locator('#optype-table tr.optype').count(), summary.op_types.length);
  // The symptom table, as summary.json holds it.
  assert.equal(await page.locator('#findings-list > li').count(), summary.findings.length);
  for (const f of summary.findings) {
    assert.match(await page.locator(`#findings-list > li[data-kind="${f.kind}"]`).innerText(), new RegExp(f.evidence[0].slice(0, 30).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  }
  const notExecuted = drawn('framework').filter((n) => n.executed === false).length;
  assert.equal(await page.locator('#framework-graph g.node.not-executed').count(), notExecuted);
  await page.evaluate(() => Object.values(opscope.app.graphs).forEach((g) => g.fit()));  // the opening view again

  // Bars are coloured by op type, and the canvas shows those colours: one
  // per op type row of summary.json, each in the legend.
  const fills = new Map();
  for (const t of await drawnTasks(page)) fills.set(t.op_type, [...(fills.get(t.op_type) || []), t]);
  assert.deepEqual([...fills.keys()].sort(), summary.op_types.map((r) => r.op_type).sort());
  for (const [type, ts] of fills) assert.equal(new Set(ts.map((t) => t.fill)).size, 1, `one colour for ${type}`);
  assert.equal(new Set([...fills.values()].map((ts) => ts[0].fill)).size, fills.size, 'each op type its own colour');
  assert.deepEqual((await page.$$eval('#timeline-legend .legend-item', (is) => is.map((i) => i.dataset.key))).sort(),
    [...fills.keys()].sort());
  for (const [type, ts] of fills) {
    const t = ts.sort((a, b) => (b.box.x1 - b.box.x0) - (a.box.x1 - a.box.x0))[0];
    if (t.box.x1 - t.box.x0 < 4) continue;  // too thin to sample inside its outline
    const pixel = await page.evaluate(([x, y]) => {
      const c = document.querySelector('#timeline canvas'), r = c.getBoundingClientRect(), k = c.width / r.width;
      return [...c.getContext('2d').getImageData(Math.floor((x - r.left) * k), Math.floor((y - r.top) * k), 1, 1).data];
    }, [(t.box.x0 + t.box.x1) / 2, t.box.y1 - 2.5]);
    const want = t.fill.match(/[0-9a-f]{2}/gi).map((h) => parseInt(h, 16));
    assert.ok(want.every((v, i) => Math.abs(v - pixel[i]) <= 2), `${type} is drawn ${t.fill}, the canvas has rgb(${pixel})`);
  }
  // Nothing selected: no dependency arrow drawn.
  assert.equal((await timelineFrame(page)).flows.filter((f) => f.cat === 'dependency').length, 0);

  // A framework node that was fused: its compiled node is selected, exactly its tasks light up.
  const compiledById = new Map(graph.compiled.nodes.map((n) => [n.node_id, n]));
  const fused = graph.framework.nodes.find((n) => n.executed === false && n.compiled_node_id !== undefined &&
    compiledById.get(n.compiled_node_id).fused_from.length > 1);
  assert.ok(fused, 'the model has a fused framework node');
  const target = compiledById.get(fused.compiled_node_id);
  await page.click(`#framework-graph g.node[data-node-id="${fused.node_id}"]`);
  assert.deepEqual(await ids(page, '#framework-graph g.node.selected', 'data-node-id'), [fused.node_id]);
  assert.deepEqual(await ids(page, '#compiled-graph g.node.selected', 'data-node-id'), [target.node_id]);
  const expectedTasks = tasks.filter((t) => target.mapped_task_ids.includes(t.args.task_id)).map((t) => t.args.task_id);
  assert.ok(expectedTasks.length > 0);
  assert.deepEqual(sorted(await marked(page, 'highlighted', 'task_id')), sorted(expectedTasks));
  assert.equal((await marked(page, 'selected', 'task_id')).length, 0);
  assert.match(await page.textContent('#details'), /ran inside its compiled node: fused into/);

  // A task: its compiled node and that node's framework nodes are selected.
  const kernelTask = tasks.filter((t) => t.args.node_id >= 0).sort((a, b) => b.dur - a.dur)[0];
  const taskNode = compiledById.get(kernelTask.args.node_id);
  await clickTask(page, (t) => t.task_id === kernelTask.args.task_id);
  assert.deepEqual(await marked(page, 'selected', 'task_id'), [kernelTask.args.task_id]);
  assert.deepEqual(await ids(page, '#compiled-graph g.node.selected', 'data-node-id'), [taskNode.node_id]);
  assert.deepEqual(sorted(await ids(page, '#framework-graph g.node.selected', 'data-node-id')), sorted(taskNode.fused_from));
  assert.ok((await page.textContent('#details')).includes(kernelTask.args.kernel));
  if (!full) return;

  // What it achieved, from its cost model's bytes and FLOPs over its time, against summary.json's peaks.
  const costed = tasks.filter((t) => t.args.bound !== undefined && t.args.bound !== 'none').sort((x, y) => y.dur - x.dur)[0];
  assert.ok(costed, 'the run has a task with a cost model');
  await clickTask(page, (t) => t.task_id === costed.args.task_id);
  const peaks = summary.roofline.peaks, ns = costed.dur * 1e3, a = costed.args;
  assert.ok(typeof a.bytes === 'number' && a.bytes > 0 && typeof a.flops === 'number', JSON.stringify(a));
  const details = await page.textContent('#details');
  for (const expected of [`achieved${rate(a.bytes / ns)} GB/s (${pct(a.bytes / ns / peaks.bandwidth_gbs)} of peak) · ` +
      `${rate(a.flops / ns)} GFLOP/s (${pct(a.flops / ns / peaks.gflops_f32)} of peak)`,
    `peaks${rate(peaks.bandwidth_gbs)} GB/s · ${rate(peaks.gflops_f32)} GFLOP/s`]) {
    assert.ok(details.includes(expected), `details show ${expected}: ${details}`);
  }

  // Only the selected task's dependencies are drawn, from its producer's end.
  const waits = dependencies(run);
  const waiter = waits[0];
  assert.ok(waiter, 'the run has a cross-stream dependency');
  await clickTask(page, (t) => t.index === waiter.consumer);
  const arrows = (await timelineFrame(page)).flows.filter((f) => f.cat === 'dependency');
  const touching = waits.filter((w) => w.producer === waiter.consumer || w.consumer === waiter.consumer);
  assert.deepEqual(arrows.map((f) => [f.fromTask, f.toTask]).sort(), touching.map((w) => [w.producer, w.consumer]).sort());
  const producerBox = (await drawnTasks(page)).find((t) => t.index === waiter.producer).box;
  const arrow = arrows.find((f) => f.fromTask === waiter.producer);
  assert.ok(Math.abs(arrow.x1 - producerBox.x1) < 1, `the arrow leaves at ${arrow.x1}, its producer ends at ${producerBox.x1}`);

  // A task no node explains (the inserted input copy) says so.
  const copy = tasks.find((t) => t.args.node_id < 0);
  assert.ok(copy, 'the run has an inserted copy task');
  await clickTask(page, (t) => t.task_id === copy.args.task_id);
  assert.equal(await page.locator('#compiled-graph g.node.selected').count(), 0);
  assert.match(await page.textContent('#details'), /none: inserted by the compiler \(memcpy_h2d\)/);

  // Hovering a task shows its kernel, op type and duration.
  await hoverTask(page, (t) => t.task_id === kernelTask.args.task_id);
  const tip = await page.textContent('#tooltip');
  assert.ok(await page.isVisible('#tooltip'));
  assert.ok(tip.includes(kernelTask.args.kernel) && tip.includes(kernelTask.args.op_type), tip);

  // An op type row lights up exactly the tasks summary.json counts in it.
  const row = summary.op_types.find((r) => !r.data_movement);
  await page.click(`#optype-table tr.optype[data-op-type="${row.op_type}"]`);
  assert.equal((await marked(page, 'highlighted', 'index')).length, row.count);
  assert.equal((await timelineFrame(page)).flows.filter((f) => f.cat === 'dependency').length, 0,
    'lit up, not selected: their dependencies are not drawn');
  const ofType = graph.compiled.nodes.filter((n) => n.op_type === row.op_type).map((n) => n.node_id);
  assert.deepEqual(sorted(await ids(page, '#compiled-graph g.node.highlighted', 'data-node-id')), sorted(ofType));

  // Search by name selects the node and brings it into view.
  const wanted = graph.framework.nodes[graph.framework.nodes.length - 1];
  await page.fill('#search', wanted.name);
  await page.press('#search', 'Enter');
  assert.deepEqual(await ids(page, '#framework-graph g.node.selected', 'data-node-id'), [wanted.node_id]);
  const box = await page.locator(`#framework-graph g.node[data-node-id="${wanted.node_id}"]`).boundingBox();
  const host = await page.locator('#framework-graph').boundingBox();
  assert.ok(box.x >= host.x && box.y >= host.y && box.x + box.width <= host.x + host.width &&
    box.y + box.height <= host.y + host.height, 'the found node is in view');
  await page.fill('#search', 'no such node name');
  await page.press('#search', 'Enter');
  assert.match(await page.textContent('#search-status'), /no node/);
}

// The page's figures as it prints them (web/perf.js, web/model.js).
const rate = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 0.01 ? v.toFixed(2) : v.toPrecision(2));
const pct = (share) => (share * 100 < 1 ? (share * 100).toPrecision(2) : (share * 100).toFixed(1)) + ' %';

// trace.json's event waits as task indexes (the page numbers X events in file
// order): a flow starts where its producer starts and ends where its consumer does.
function dependencies(run) {
  const at = (tid, ts) => run.tasks.findIndex((t) => t.tid === tid && t.ts === ts);
  const starts = new Map(run.trace.traceEvents.filter((e) => e.ph === 's').map((e) => [e.id, e]));
  return run.trace.traceEvents.filter((e) => e.ph === 'f' && starts.has(e.id)).map((f) => {
    const s = starts.get(f.id);
    return {producer: at(s.tid, s.ts), consumer: at(f.tid, f.ts)};
  });
}

// ops-debug profile's folder: its timeline.json and roofline.svg, nothing else.
const fixtureDir = path.join(here, 'timeline');
function readTimeline(dir) {
  const timeline = JSON.parse(fs.readFileSync(path.join(dir, 'timeline.json'), 'utf8'));
  const events = timeline.traceEvents.filter((e) => e.ph === 'X');
  const svg = fs.readFileSync(path.join(dir, 'roofline.svg'), 'utf8');
  return {dir, timeline, events, circles: (svg.match(/<circle\b/g) || []).length,
    threads: timeline.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name'),
    flows: timeline.traceEvents.filter((e) => e.ph === 'f').length};
}

// The bars of one lane's events, by event index (the page numbers events in file order).
async function bars(page) {
  return (await drawnTasks(page)).map((t) => ({index: t.index, stream: t.stream, depth: t.depth, ...t.box}));
}

// What a page of the profile must show: every event on its lane, the phases
// on the sub-row under their api span, the kernel's args, the chart.
async function checkTimelinePage(page, profile, {full = true} = {}) {
  const {events, threads} = profile;
  assert.ok(await page.isHidden('#framework-pane') && await page.isHidden('#compiled-pane'), 'no graph panes');
  assert.ok(await page.isHidden('#optype-section') && await page.isHidden('#search'));
  assert.equal((await timelineLanes(page)).length, threads.length);
  // host and device both have a thread 1: two lanes, named process / thread.
  const processName = (pid) => profile.timeline.traceEvents.find((e) => e.ph === 'M' && e.name === 'process_name' && e.pid === pid).args.name;
  assert.deepEqual((await timelineLanes(page)).map((l) => l.name),
    threads.map((t) => `${processName(t.pid)} / ${t.args.name}`));
  assert.equal((await drawnTasks(page)).length, events.length);
  assert.equal((await timelineFrame(page)).flows.length, profile.flows);
  for (const cat of ['api', 'phase', 'kernel']) {
    assert.equal((await marked(page, `cat-${cat}`, 'index')).length, events.filter((e) => e.cat === cat).length, cat);
  }
  assert.equal((await marked(page, 'no-node', 'index')).length, 0, 'no graph: no event is said to lack a node');

  // Sub-rows: each phase lies under the api span holding it, none on top of another.
  const drawn = await bars(page);
  const apis = events.map((e, i) => [e, i]).filter(([e]) => e.cat === 'api');
  assert.ok(apis.length > 0);
  for (const [api, ai] of apis) {
    const phases = events.map((e, i) => [e, i]).filter(([e]) => e.cat === 'phase' && e.pid === api.pid && e.tid === api.tid &&
      e.ts >= api.ts && e.ts + e.dur <= api.ts + api.dur);
    assert.ok(phases.length >= 2, 'the fixture nests phases in its api spans');
    for (const [, pi] of phases) {
      assert.ok(drawn[pi].y0 >= drawn[ai].y1, `phase ${events[pi].name} starts below its api span`);
      assert.ok(drawn[pi].x0 >= drawn[ai].x0 - 0.5 && drawn[pi].x1 <= drawn[ai].x1 + 0.5, 'and within it in time');
    }
  }
  for (const a of drawn) {
    for (const b of drawn) {
      if (a.index >= b.index || Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) <= 0.5) continue;
      assert.ok(a.y1 <= b.y0 || b.y1 <= a.y0, `events ${a.index} and ${b.index} overlap on screen`);
    }
  }

  // The Roofline panel holds the chart, points and all.
  assert.ok(await page.isVisible('#roofline-section'));
  assert.match(await page.textContent('#roofline-section h2'), /^Roofline/);
  assert.equal(await page.locator('#roofline svg circle').count(), profile.circles);
  if (!full) return;

  // A kernel: its launch, buffers, cost and efficiency.
  const kernels = events.map((e, i) => [e, i]).filter(([e]) => e.cat === 'kernel');
  const [slow, si] = kernels.find(([e]) => e.args.efficiency < 1);
  await clickTask(page, (t) => t.index === si);
  assert.deepEqual(await marked(page, 'selected', 'index'), [si]);
  const details = await page.textContent('#details');
  const a = slow.args;
  for (const expected of [a.kernel, `grid [${a.grid}] block [${a.block}]`, `vector width ${a.vector_width}`,
    a.inputs[0].address, a.outputs[0].address, `(${a.bytes_read.toLocaleString('en-US')} B)`, a.flops.toLocaleString('en-US'),
    `bound${a.bound}`, `lower bound${a.lower_bound_us.toFixed(3)} µs`, `efficiency${(a.efficiency * 100).toFixed(1)} %`,
    `${(1 / a.efficiency).toFixed(1)}× its lower bound`]) {
    assert.ok(details.includes(expected), `details show ${expected}: ${details}`);
  }
  assert.ok(!/compiled node|inserted by the compiler/.test(details), details);
  // A device kernel's resources sit in its launch line; a host kernel has none.
  assert.ok(details.includes('40 registers/thread · 1,536 B shared/block · occupancy 94% (3 blocks/SM)'), details);
  // One faster than its roof says which roof and why (args.above_roof), in the details and the tooltip.
  const [fast, fi] = kernels.find(([e]) => e.args.efficiency > 1);
  assert.equal(fast.args.above_roof, 'beats_gemm');
  await clickTask(page, (t) => t.index === fi);
  assert.ok((await page.textContent('#details')).includes(`efficiency${(fast.args.efficiency * 100).toFixed(1)} % ` +
    "(above the compute roof (the calibrated GEMM's rate): faster than that GEMM, under the FMA loop's peak)"));
  await hoverTask(page, (t) => t.index === fi);
  assert.match(await page.textContent('#tooltip'), /efficiency120\.0 % \(above the compute roof\)/);
  // A phase has none of a kernel's figures.
  const phase = events.findIndex((e) => e.cat === 'phase' && e.dur >= 5);
  await clickTask(page, (t) => t.index === phase);
  const phaseDetails = await page.textContent('#details');
  assert.ok(phaseDetails.includes('phase' + events[phase].args.phase), phaseDetails);
  assert.ok(!/efficiency|launch|bytes read|registers/.test(phaseDetails), phaseDetails);
  await hoverTask(page, (t) => t.index === si);
  assert.match(await page.textContent('#tooltip'), /efficiency1\.0 %/);
}

// ops-debug diagnose's folder: its diagnosis.json alone.
const diagnosisFixture = path.join(here, 'diagnosis', 'diagnosis.json');
function readDiagnosis(dir) {
  const diagnosis = JSON.parse(fs.readFileSync(path.join(dir, 'diagnosis.json'), 'utf8'));
  const records = diagnosis.snapshot.trajectory;
  return {dir, diagnosis, records, failing: records.find((r) => r.failing),
    lanes: [...new Set(records.map((r) => r.device + '/' + r.stream))]};
}

// The drawn record of one seq: its box on screen and its classes.
async function record(page, seq) {
  const t = (await drawnTasks(page)).find((r) => r.seq === seq);
  return {...t.box, classes: t.classes, fill: t.fill, cross: t.cross};
}
const selectedSeqs = (page) => marked(page, 'selected', 'seq');

// What the page of a diagnosis must show: one lane per stream, every record,
// the failing launch marked, drawn to the end of the recording and selected,
// the causes in the library's order, each naming a launch selecting it.
async function checkDiagnosisPage(page, diag, {full = true} = {}) {
  const {diagnosis, records, failing} = diag;
  assert.ok(await page.isHidden('#framework-pane') && await page.isHidden('#compiled-pane'), 'no graph panes');
  assert.ok(await page.isVisible('#diagnosis-pane'));
  assert.equal((await timelineLanes(page)).length, diag.lanes.length);
  assert.equal((await drawnTasks(page)).length, records.length);
  const instants = records.filter((r) => r.kind !== 'launch' && r.end_us === null).length;
  assert.equal((await marked(page, 'instant', 'index')).length, instants);
  // The failing launch: marked (red, striped as never finished, crossed), and the only one.
  assert.deepEqual(await marked(page, 'failing', 'seq'), [failing.seq]);
  const bar = await record(page, failing.seq);
  assert.ok(bar.classes.includes('unfinished') && bar.cross, bar.classes.join(' '));
  assert.match(bar.fill, /hatch-failing/);
  // It runs to the end of the recording: the latest end any record holds.
  const last = records.filter((r) => r.end_us !== null).sort((a, b) => b.end_us - a.end_us)[0];
  if (last && last.end_us > failing.start_us) {
    assert.ok(Math.abs(bar.x1 - (await record(page, last.seq)).x1) < 1, 'the never-finished launch is drawn to the end');
  }
  // Selected when the page opens, in view, its details shown.
  assert.deepEqual(await selectedSeqs(page), [failing.seq]);
  const pane = await page.locator('#timeline').boundingBox();
  assert.ok(bar.x0 >= pane.x && bar.x1 <= pane.x + pane.width && bar.y0 >= pane.y && bar.y1 <= pane.y + pane.height, 'in view');
  const details = await page.textContent('#details');
  assert.ok(details.includes(failing.kernel) && details.includes(failing.state + ' · the failing launch'), details);
  // The panel: the status, the causes in order, the faulting stack.
  assert.match(await page.textContent('#diagnosis-status'), new RegExp(`^${diagnosis.status}` + (diagnosis.signal ? ` ${diagnosis.signal}` : '')));
  const causes = await page.$$eval('#causes li.cause', (lis) => lis.map((li) => ({
    rank: +li.dataset.rank, text: li.querySelector('.cause-text').textContent, confidence: li.querySelector('.confidence').textContent})));
  assert.deepEqual(causes, diagnosis.causes.map((c, i) => ({rank: i + 1, text: c.cause, confidence: c.confidence})));
  const frames = await page.$$eval('ol.stack li.frame', (lis) => lis.map((li) => li.textContent));
  assert.equal(frames.length, diagnosis.snapshot.stack.length);
  const top = diagnosis.snapshot.stack[0];
  if (top) assert.ok(frames[0].includes(top.function) && frames[0].includes(`${top.file}:${top.line}`), frames[0]);
  if (!full) return;
  // A cause that names another launch selects it, and back.
  const other = diagnosis.causes.findIndex((c) => !c.cause.includes(failing.op_id) && records.some((r) => r.kind === 'launch' && c.cause.includes(r.op_id)));
  assert.ok(other > 0, 'the fixture has a cause naming another launch');
  const named = records.find((r) => r.kind === 'launch' && diagnosis.causes[other].cause.includes(r.op_id));
  await page.click(`#causes li.cause[data-rank="${other + 1}"]`);
  assert.deepEqual(await selectedSeqs(page), [named.seq]);
  assert.deepEqual(await ids(page, '#causes li.cause.selected', 'data-rank'), [other + 1]);
  assert.ok((await page.textContent('#details')).includes(named.kernel));
  await page.click('#causes li.cause[data-rank="1"]');
  assert.deepEqual(await selectedSeqs(page), [failing.seq]);
  // A sync record is an instant with its record number and state.
  const sync = records.find((r) => r.kind === 'stream sync');
  await clickTask(page, (t) => t.seq === sync.seq);
  assert.deepEqual(await selectedSeqs(page), [sync.seq]);
  assert.match(await page.textContent('#details'), new RegExp(`#${sync.seq} · stream sync`));
  assert.deepEqual(await ids(page, '#causes li.cause.selected', 'data-rank'), []);
}

function rawRequest(port, text) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

let launched;
before(async () => {
  launched = chromium.launch({executablePath: chromiumPath, headless: true}).then(async (b) => {
    browser = b;
    page = await b.newPage({viewport: {width: 1600, height: 950}});
    // Whatever the page's Content-Security-Policy blocks is a problem: the
    // page must work under it. Injected by the browser, outside the policy.
    await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`)));
    page.on('console', (m) => m.type() === 'error' && problems.push('console: ' + m.text()));
    page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  });
  const profileDir = path.join(work, 'profile');
  fs.mkdirSync(profileDir);
  fs.copyFileSync(path.join(fixtureDir, 'roofline.svg'), path.join(profileDir, 'roofline.svg'));
  // The fixture is a cpu profile; its first slow kernel is given what the cuda
  // backend adds to a device kernel's args (no GPU here to record one).
  const fixture = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'timeline.json'), 'utf8'));
  Object.assign(fixture.traceEvents.find((e) => e.ph === 'X' && e.cat === 'kernel' && e.args.efficiency < 1).args,
    {registers_per_thread: 40, shared_bytes_per_block: 1536, active_blocks_per_sm: 3, occupancy: 0.9375});
  // Its kernel above the memory roof is made one above the compute roof, as
  // a newer opscope writes it: args.above_roof says which roof and why.
  Object.assign(fixture.traceEvents.find((e) => e.ph === 'X' && e.cat === 'kernel' && e.args.efficiency > 1).args,
    {bound: 'compute', above_roof: 'beats_gemm'});
  fs.writeFileSync(path.join(profileDir, 'timeline.json'), JSON.stringify(fixture));
  runs.profile = readTimeline(profileDir);
  const diagnosisDir = path.join(work, 'diagnosis');
  fs.mkdirSync(diagnosisDir);
  fs.copyFileSync(diagnosisFixture, path.join(diagnosisDir, 'diagnosis.json'));
  runs.diagnosis = readDiagnosis(diagnosisDir);
  [runs.twoBranch, runs.resnet, runs.base, runs.vs, runs.other] = await Promise.all([
    makeRun('two_branch', 'two_branch.onnx', ['--streams', '2']),
    makeRun('resnet_small', 'resnet_small.onnx', []),
    // A baseline and two runs to compare with it: the same model on another
    // stream count, and another model.
    makeRun('base', 'two_branch.onnx', ['--streams', '1', '--iterations', '3']),
    // Compiled without a pass, so the diff has nodes added and fusions undone.
    makeRun('vs', 'two_branch.onnx', ['--streams', '2', '--iterations', '3', '--disable-pass', 'bias_activation_fusion']),
    makeRun('other', 'const_if.onnx', ['--iterations', '3']),
    launched,
  ]);
});

after(async () => {
  // A failed run must not leave the browser it raced with open (the test would never end).
  await launched?.catch(() => {});
  if (browser) await browser.close();
  fs.rmSync(work, {recursive: true, force: true});
});

test('report.html of two_branch (2 streams), opened as a file', async () => {
  const run = runs.twoBranch;
  assert.equal(run.threads.length, 3, 'two compute streams and the copy stream');
  assert.equal(run.summary.findings[0].kind, 'not_executed', 'its fusions: a finding the page must list');
  await openPage(pathToFileURL(path.join(run.dir, 'report.html')).href);
  await checkPage(page, run);
  if (process.env.OPSCOPE_WEB_SCREENSHOT) {
    await page.dblclick('#framework-graph svg', {position: {x: 4, y: 4}});  // fit the graph again
    await page.click('#framework-graph g.node.not-executed');
    await page.screenshot({path: process.env.OPSCOPE_WEB_SCREENSHOT});
  }
  assert.deepEqual(problems, []);
});

test('report.html of resnet_small, opened as a file', async () => {
  await openPage(pathToFileURL(path.join(runs.resnet.dir, 'report.html')).href);
  await checkPage(page, runs.resnet);
  assert.deepEqual(problems, []);
});

// A variance finding is summary.json's (the C++ tests check when one is
// found, from capture.json): given one for a real node, the page lists it
// beside the totals, links it to the node, and the node says it too.
test('a node whose time varies 10x between iterations is a finding on the page, linked to its node', async () => {
  const dir = path.join(work, 'variance');
  fs.cpSync(runs.base.dir, dir, {recursive: true});
  fs.rmSync(path.join(dir, 'report.html'));
  const summary = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
  const node = runs.base.graph.compiled.nodes.find((n) => n.time_us);
  assert.ok(node, 'a compiled node that ran');
  const text = `${node.name} (${node.op_type}): 2.0 us in iteration 1 to 40.0 us in iteration 3 of 3 (20x): not one speed`;
  summary.variance = [{node_id: node.node_id, node: node.name, op_type: node.op_type, min_us: 2, max_us: 40,
    fastest_iteration: 1, slowest_iteration: 3, iterations: 3, text}];
  fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(summary));
  inspector(['export', '--input-dir', dir, '--format', 'html']);
  await openPage(pathToFileURL(path.join(dir, 'report.html')).href);
  assert.equal(await page.locator('#variance-list li').count(), 1);
  assert.match(await page.textContent('#variance-list li'), /\(20x\): not one speed/);
  await page.click('#variance-list li a[data-link="node"]');
  assert.equal(await page.textContent('#details h3'), node.name);
  assert.equal(await page.textContent('#details p.status.variance'),
    'time varies 20x between iterations: 2.000 µs in iteration 1 to 40.000 µs in iteration 3 of 3');
  // The run without findings has no list.
  await openPage(pathToFileURL(path.join(runs.base.dir, 'report.html')).href);
  assert.equal(await page.locator('#variance-list').count(), runs.base.summary.variance.length ? 1 : 0);
  assert.deepEqual(problems, []);
});

// `run --expected`: the verdict per output, with its pattern, beside the op types.
test('a run against expected outputs shows each output\'s verdict and pattern', async () => {
  const saved = path.join(work, 'expected-saved'), dir = path.join(work, 'expected-run');
  const model = path.join(sourceDir, 'examples/models/two_branch.onnx');
  inspector(['run', model, '--output-dir', path.join(work, 'expected-first'), '--iterations', '1', '--save-outputs', saved]);
  // 1% off on every element of the saved float32 output (.npy: magic, version, header length, header, data).
  const npy = fs.readFileSync(path.join(saved, 'scores.npy'));
  const data = 10 + npy.readUInt16LE(8);
  for (let at = data; at < npy.length; at += 4) npy.writeFloatLE(npy.readFloatLE(at) * 1.01, at);
  const off = path.join(work, 'scores_off.npy');
  fs.writeFileSync(off, npy);
  const r = inspector(['run', model, '--output-dir', dir, '--iterations', '1', '--expected', off], 1);
  assert.match(r.stdout, /output scores {2}float32\[1,3\] {2}FAILED/);
  inspector(['export', '--input-dir', dir, '--format', 'html']);
  await openPage(pathToFileURL(path.join(dir, 'report.html')).href);
  assert.equal(await page.locator('#outputs-checked tr.failed').count(), 1);
  const row = await page.locator('#outputs-checked tr.failed').innerText();
  assert.match(row, /scores\s+FAILED\s+3 \/ 3\s+0\.00448\s+errors everywhere \(every element\)/);
  // A run without --expected has no such table.
  await openPage(pathToFileURL(path.join(runs.base.dir, 'report.html')).href);
  assert.equal(await page.locator('#outputs-checked').count(), 0);
  assert.deepEqual(problems, []);
});

// A node's ancestors and descendants, from graph.json's nodes: each tensor a
// node reads links it to the node that writes it.
function coneOf(layer, id) {
  const up = new Map(), down = new Map(), push = (m, k, v) => m.set(k, [...(m.get(k) || []), v]);
  const nameOf = (t) => (typeof t === 'string' ? t : t.name);
  const writer = new Map(layer.nodes.flatMap((n) => n.outputs.map((t) => [nameOf(t), n.node_id])));
  for (const n of layer.nodes) {
    for (const t of n.inputs) {
      if (!writer.has(nameOf(t))) continue;
      push(down, writer.get(nameOf(t)), n.node_id);
      push(up, n.node_id, writer.get(nameOf(t)));
    }
  }
  const walk = (next) => {
    const seen = new Set(), todo = [id];
    while (todo.length) for (const n of next.get(todo.pop()) || []) if (n !== id && !seen.has(n)) todo.push(seen.add(n) && n);
    return seen;
  };
  return {ancestors: walk(up), descendants: walk(down)};
}
const classed = (page, layer, cls) => page.$$eval(`#${layer}-graph g.node.${cls}`, (gs) => gs.map((g) => Number(g.dataset.nodeId)));

test('a node\'s paths and the run\'s critical path light up in every view', async () => {
  const {graph, summary} = runs.resnet;
  await openPage(pathToFileURL(path.join(runs.resnet.dir, 'report.html')).href);
  const layer = graph.compiled, drawn = new Set(layer.nodes.filter((n) => n.scope !== undefined).map((n) => n.node_id));
  const node = layer.nodes.find((n) => drawn.has(n.node_id) && [...Object.values(coneOf(layer, n.node_id))].every((s) => s.size > 1));
  assert.ok(node, 'a compiled node with ancestors and descendants');
  const cone = coneOf(layer, node.node_id), lit = [...cone.ancestors, ...cone.descendants];
  await page.evaluate((id) => opscope.app.select({kind: 'node', node: opscope.app.model.layers.compiled.byId.get(id)}), node.node_id);
  await page.click('#details a[data-link="cone"]');
  assert.ok((await page.textContent('#details')).includes(
    `paths lit: ${cone.ancestors.size} ancestor(s) and ${cone.descendants.size} descendant(s) in the compiled graph`));
  await showWholeGraphs(page);
  assert.deepEqual(await classed(page, 'compiled', 'selected'), [node.node_id]);
  assert.deepEqual(sorted(await classed(page, 'compiled', 'highlighted')), sorted(lit.filter((id) => drawn.has(id))));
  const byId = new Map(layer.nodes.map((n) => [n.node_id, n]));
  const taskIds = [node.node_id, ...lit].flatMap((id) => byId.get(id).mapped_task_ids || []);
  assert.ok(taskIds.length > 0);
  assert.deepEqual(sorted(await marked(page, 'highlighted', 'task_id')), sorted(taskIds));
  // Their framework nodes too.
  const framework = graph.framework.nodes.filter((n) => n.scope !== undefined &&
    [node.node_id, ...lit].includes(n.compiled_node_id)).map((n) => n.node_id);
  assert.deepEqual(sorted(await classed(page, 'framework', 'highlighted')), sorted(framework));

  // The critical path: its tasks selected, and off again.
  const critical = summary.critical_path.task_ids;
  assert.ok(critical.length > 0);
  await page.check('#critical-toggle input');
  assert.deepEqual(sorted(await marked(page, 'selected', 'task_id')), sorted(critical));
  assert.ok((await page.textContent('#details h3')) === 'critical path');
  await page.uncheck('#critical-toggle input');
  assert.deepEqual(await marked(page, 'selected', 'task_id'), []);
  assert.deepEqual(problems, []);
});

// inspector-cli accuracy written into a run's folder: each node filled by
// its own error (the band read here from accuracy.json's tolerance_ratio),
// the panel's verdict and top nodes, a node's errors and histogram in its
// details, and the path from the inputs to the first divergent node lit in
// both graphs and on the timeline; served the same; refused once the folder
// holds another run.
const bandOf = (local) => (!local || !local.compared ? null : local.tolerance_ratio === null ? 'acc-inf'
  : local.tolerance_ratio > 1 ? 'acc-3' : local.tolerance_ratio >= 0.1 ? 'acc-2' : local.tolerance_ratio >= 0.01 ? 'acc-1' : 'acc-0');
async function checkAccuracyPage(page, dir, acc) {
  const graph = readGraphJson(path.join(dir, 'graph.json'));
  const compiledByName = new Map(graph.compiled.nodes.map((n) => [n.name, n]));
  const bands = await page.$$eval('#compiled-graph g.node', (gs) => gs.map((g) => [Number(g.dataset.nodeId),
    [...g.classList].find((c) => c.startsWith('acc-')) || null]));
  const expected = acc.nodes.map((e) => [compiledByName.get(e.name).node_id, bandOf(e.local)]);
  assert.deepEqual(new Map(bands.filter(([id]) => expected.some(([x]) => x === id))), new Map(expected));
  assert.ok(expected.some(([, b]) => b === 'acc-inf') && expected.some(([, b]) => b === 'acc-0'), 'the scale is used');
  // A framework node wears its compiled node's band.
  for (const f of graph.framework.nodes.filter((n) => n.scope !== undefined)) {
    const c = graph.compiled.nodes.find((n) => n.node_id === f.compiled_node_id);
    const e = acc.nodes.find((x) => x.name === c.name);
    assert.equal(await page.$eval(`#framework-graph g.node[data-node-id="${f.node_id}"]`,
      (g) => [...g.classList].find((x) => x.startsWith('acc-')) || null), e ? bandOf(e.local) : null, f.name);
  }
  await page.click('#compiled-graph .graph-legend summary');
  assert.match(await page.textContent('#compiled-graph .graph-legend'), /own error over its tolerance: diverges/);
  await page.click('#compiled-graph .graph-legend summary');
  // The panel: the verdict and the nodes by their own error, in the file's order.
  assert.match(await page.textContent('#accuracy'), new RegExp(`the first along the data flow is ${acc.first_divergent}`));
  assert.deepEqual(await page.$$eval('#accuracy-top tr[data-node]', (trs) => trs.map((tr) => tr.dataset.node)),
    acc.nodes.slice(0, 5).map((e) => e.name));
  // The first divergent node's details: its three errors, its rule, its histogram.
  const first = acc.nodes.find((e) => e.name === acc.first_divergent), firstId = compiledByName.get(first.name).node_id;
  await page.click(`#compiled-graph g.node[data-node-id="${firstId}"]`);
  const details = await page.textContent('#details');
  assert.ok(details.includes('the first divergent node: diverges'), details);
  assert.ok(details.includes(first.tolerance), details);
  assert.ok(details.includes(`${first.local.mismatched} / ${first.local.total} out of tolerance`), details);
  assert.equal(await page.locator('#details table.accuracy-histogram tr').count(), first.local.histogram.length + 1);
  // The path: the node selected, every node it depends on lit, their framework nodes and tasks too.
  await page.keyboard.press('Escape');
  await page.click('#accuracy-path');
  await showWholeGraphs(page);
  const {ancestors} = coneOf(graph.compiled, firstId);
  assert.ok(ancestors.size > 0);
  assert.deepEqual(await classed(page, 'compiled', 'selected'), [firstId]);
  assert.deepEqual(sorted(await classed(page, 'compiled', 'highlighted')), sorted([...ancestors]));
  const lit = [firstId, ...ancestors];
  assert.deepEqual(sorted([...await classed(page, 'framework', 'selected'), ...await classed(page, 'framework', 'highlighted')]),
    sorted(graph.framework.nodes.filter((n) => n.scope !== undefined && lit.includes(n.compiled_node_id)).map((n) => n.node_id)));
  const byId = new Map(graph.compiled.nodes.map((n) => [n.node_id, n]));
  assert.deepEqual(sorted(await marked(page, 'highlighted', 'task_id')), sorted(lit.flatMap((id) => byId.get(id).mapped_task_ids || [])));
  assert.match(await page.textContent('#details'), new RegExp(`the path from the inputs to the first divergent node: ${ancestors.size} node`));
}

test('inspector-cli accuracy beside a run: nodes filled by their own error, the path to the first divergent node lit', async () => {
  const dir = path.join(work, 'accuracy-run'), plugin = path.join(binaryDir, 'lib', 'libbuggy_ops.so');
  const model = path.join(sourceDir, 'examples/models/half_section.onnx');
  inspector(['run', model, '--plugin', plugin, '--output-dir', dir, '--iterations', '1']);
  inspector(['export', '--input-dir', dir, '--format', 'html']);
  const r = inspector(['accuracy', model, '--plugin', plugin, '--output-dir', dir], 1);
  assert.match(r.stdout, /wrote {4}.*report\.html/);
  const acc = JSON.parse(fs.readFileSync(path.join(dir, 'accuracy.json'), 'utf8'));
  await openPage(pathToFileURL(path.join(dir, 'report.html')).href);
  await checkAccuracyPage(page, dir, acc);
  assert.deepEqual(problems, []);

  const {server, exited, address} = startServe(cli, dir);
  try {
    await openPage((await address).url);
    await checkAccuracyPage(page, dir, acc);
    assert.deepEqual(problems, []);
  } finally {
    server.kill('SIGINT');
  }
  assert.deepEqual(await exited, {code: 0, signal: null});

  // Another run in the folder: its page says the accuracy is of another run and colours nothing.
  inspector(['run', model, '--plugin', plugin, '--output-dir', dir, '--iterations', '1']);
  inspector(['export', '--input-dir', dir, '--format', 'html']);
  await openPage(pathToFileURL(path.join(dir, 'report.html')).href);
  assert.match(await page.textContent('#accuracy .error'), /accuracy\.json: of another run \(/);
  assert.equal(await page.locator('g.node[class*="acc-"]').count(), 0);
  assert.deepEqual(problems, []);
});

// Against a baseline, the page marks what diff.json says: the same two runs
// through `inspector-cli diff --output`, read here.
function diffOf(base, run, extra = []) {
  const file = path.join(work, path.basename(run.dir) + '.diff.json');
  const r = spawnSync(cli, ['diff', base.dir, run.dir, '--output', file, ...extra], {encoding: 'utf8'});
  assert.ok(r.status === 0 || r.status === 1, `diff exited ${r.status}: ${r.stderr}`);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
// The badge a compiled node gets, by the page's rule: added, else its time's verdict, else a fusion.
function expectedBadge(diff, n) {
  if (diff.nodes.compiled.added.includes(n.name)) return 'chg-added';
  const v = (diff.node_times.find((e) => e.node === n.name) || {}).verdict;
  if (v === 'slower' || v === 'faster' || v === 'new') return 'chg-' + v;
  if ([...diff.fusions.added, ...diff.fusions.changed].some((f) => f.node === n.name)) return 'chg-fusion';
  return null;
}
const badges = (page, layer) => page.$$eval(`#${layer}-graph g.node`, (gs) =>
  Object.fromEntries(gs.map((g) => [g.dataset.nodeId, [...g.classList].find((c) => c.startsWith('chg-')) || null])));

// onnxruntime's run of resnet_small (tools/ort/run_ort.js, read by
// import-ort) against opscope's as its baseline: the two engines side by
// side through the framework graph, each row a link to its framework node.
test('an onnxruntime run against an opscope baseline: what each engine fused, side by side', async () => {
  const ortDir = path.join(work, 'ort'), dir = path.join(work, 'ort-run');
  const ran = spawnSync('node', [path.join(sourceDir, 'tools/ort/run_ort.js'), path.join(sourceDir, 'examples/models/resnet_small.onnx'),
    ortDir, '--runs', '3'], {encoding: 'utf8', timeout: 60_000});
  assert.equal(ran.status, 0, `run_ort.js (onnxruntime-node, installed by ./setup.sh): ${ran.stderr}`);
  inspector(['import-ort', '--model', path.join(sourceDir, 'examples/models/resnet_small.onnx'), '--optimized',
    path.join(ortDir, 'optimized.onnx'), '--profile', path.join(ortDir, 'profile.json'), '--output-dir', dir]);
  inspector(['export', '--input-dir', dir, '--format', 'html', '--baseline', runs.resnet.dir]);
  const diff = diffOf(runs.resnet, {dir});
  await openPage(pathToFileURL(path.join(dir, 'report.html')).href);
  assert.ok(await page.isVisible('#diff-section'));
  const rows = await page.$$eval('#diff table.diff-engines tr[data-at]', (trs) => trs.map((tr) => tr.dataset.at));
  assert.deepEqual(rows, diff.engines.fusions.slice(0, 12).map((r) => r.at));
  // The residual block's second conv: each engine took its BN, the Add and the Relu into one kernel.
  const at = '/layer1/block2/conv/Conv';
  assert.ok(rows.includes(at), 'both engines fused the conv with its residual Add and Relu');
  assert.equal(await page.textContent('#diff h4.engines'), 'engines: baseline opscope, this run onnxruntime');
  const addRow = diff.engines.fusions.find((r) => r.at === at);
  assert.ok((await page.textContent(`#diff tr[data-at="${at}"] td:nth-child(3)`)).startsWith(addRow.new.op_type + '4 nodes'));
  assert.ok((await page.textContent('#diff .layouts-new')).includes('node(s) in NCHWc'));
  // A row selects its framework node; the compiled node it went into says how it was tied.
  await page.click(`#diff table.diff-engines tr[data-at="${at}"] a.link`);
  assert.equal(await page.textContent('#details h3'), at);
  const graph = readGraphJson(path.join(dir, 'graph.json'));
  const conv = graph.compiled.nodes.find((n) => n.name === '/layer1/block2/bn/BatchNormalization_output_0_nchwc');
  await showWholeGraphs(page);
  assert.equal(await page.$$eval('#compiled-graph g.node.chg-added', (gs) => gs.length), 0, 'no "added" badge across engines');
  await page.click(`#compiled-graph g.node[data-node-id="${conv.node_id}"]`);
  assert.equal(await page.textContent('#details .mapped-by'), conv.mapped_by);
  assert.deepEqual(problems, []);
});

test('report.html against a baseline: the diff on the graphs, the timeline and its panel', async () => {
  const {base, vs} = runs;
  inspector(['export', '--input-dir', vs.dir, '--format', 'html', '--baseline', base.dir]);
  const diff = diffOf(base, vs);
  await openPage(pathToFileURL(path.join(vs.dir, 'report.html')).href);
  assert.ok(await page.isVisible('#diff-section'));
  assert.ok((await page.textContent('#diff-facts')).includes(`(${diff.span.verdict})`));
  assert.ok((await page.textContent('#diff-verdict')).startsWith(diff.passed ? 'passed' : 'FAILED'));
  assert.deepEqual(await page.$$eval('#diff table.diff-settings tr', (trs) => trs.map((tr) => tr.textContent)), ['streams1→2']);
  assert.equal(await page.textContent('#diff .diff-compiler'), 'compiler: the new run was compiled without bias_activation_fusion');
  // The noise as diff.json gives it, with the side whose load was too short to measure when there is one.
  assert.deepEqual(await page.$$eval('#diff p.muted', (ps) => ps.map((p) => p.textContent).filter((t) => t.startsWith('noise: '))),
    [`noise: ${diff.noise.base_iterations} → ${diff.noise.new_iterations} timed iterations; ${diff.noise.rule}`,
      ...(diff.noise.load_unknown ? [`noise: ${diff.noise.load_unknown}`] : [])]);
  assert.deepEqual(diff.compiler.left_out_by_new, ['bias_activation_fusion']);
  assert.ok(diff.nodes.compiled.added.length > 0 && diff.fusions.changed.length + diff.fusions.removed.length > 0);
  await showWholeGraphs(page);
  const drawn = vs.graph.compiled.nodes.filter((n) => n.scope !== undefined);
  assert.deepEqual(await badges(page, 'compiled'),
    Object.fromEntries(drawn.map((n) => [String(n.node_id), expectedBadge(diff, n)])));

  // The timeline's "vs baseline" colours: a task by its compiled node's verdict.
  await page.selectOption('#timeline-legend select.colour-mode', 'vs baseline');
  const nodeName = new Map(vs.graph.compiled.nodes.map((n) => [n.node_id, n.name]));
  // The page carries the times that moved beyond the noise; the rest read as unchanged.
  const verdict = new Map(diff.node_times.filter((e) => e.verdict !== 'within noise').map((e) => [e.node, e.verdict]));
  const byKey = new Map();
  for (const t of await drawnTasks(page)) {
    // A node the baseline lacks is coloured as added, whatever its time's verdict.
    const name = nodeName.get(t.node_id);
    const key = t.op_type === 'data movement' ? t.op_type : t.node_id < 0 ? '(no node)'
      : diff.nodes.compiled.added.includes(name) ? 'added node' : verdict.get(name) || 'unchanged';
    byKey.set(key, [...(byKey.get(key) || []), t.fill]);
  }
  assert.deepEqual((await page.$$eval('#timeline-legend .legend-item', (is) => is.map((i) => i.dataset.key))).sort(),
    [...byKey.keys()].sort());
  for (const [key, fills] of byKey) assert.equal(new Set(fills).size, 1, `one colour for ${key}`);
  assert.equal(new Set([...byKey.values()].map((f) => f[0])).size, byKey.size, 'each verdict its own colour');

  // The panel's node table, largest move first; a row selects its node.
  const count = (v) => diff.node_times.filter((e) => e.verdict === v).length;
  const changed = diff.node_times.filter((e) => e.verdict !== 'unchanged' && e.verdict !== 'within noise');
  assert.ok((await page.textContent('#diff')).includes(`compiled node times (${changed.length} changed, ` +
    `${count('within noise')} within noise, ${count('unchanged')} unchanged)`));
  if (changed.length) {
    // Rows run largest move first (to the thousandth of a microsecond the page keeps); a row
    // whose node this run's compiled graph has is a link that selects it.
    const move = new Map(changed.map((e) => [e.node, Math.abs(e.change_us || 0)]));
    const rows = await page.$$eval('#diff table.diff-nodes tr[data-node]', (trs) =>
      trs.map((tr) => ({node: tr.dataset.node, linked: !!tr.querySelector('a.link')})));
    assert.ok(rows.length > 0);
    for (const [i, r] of rows.entries()) {
      assert.ok(move.has(r.node), `row ${r.node} is a changed node`);
      assert.equal(r.linked, nodeName.size > 0 && [...nodeName.values()].includes(r.node), `${r.node} is a link iff this run has it`);
      if (i) assert.ok(move.get(rows[i - 1].node) + 1e-3 >= move.get(r.node), `${rows[i - 1].node} before ${r.node}`);
    }
    const linked = rows.find((r) => r.linked);
    if (linked) {
      const top = changed.find((e) => e.node === linked.node);
      await page.click(`#diff table.diff-nodes tr[data-node="${top.node}"] a.link`);
      assert.equal(await page.textContent('#details h3'), top.node);
      assert.ok((await page.textContent('#details .diff-time')).includes(top.verdict));
    }
  }
  assert.deepEqual(problems, []);
});

test('report.html against another model\'s run: refused without --allow-different-models, then added and removed nodes', async () => {
  const {base, other} = runs;
  const refused = inspector(['export', '--input-dir', other.dir, '--format', 'html', '--baseline', base.dir], 2);
  assert.match(refused.stderr, /--allow-different-models/);
  inspector(['export', '--input-dir', other.dir, '--format', 'html', '--baseline', base.dir, '--allow-different-models']);
  const diff = diffOf(base, other, ['--allow-different-models']);
  await openPage(pathToFileURL(path.join(other.dir, 'report.html')).href);
  await showWholeGraphs(page);
  const drawn = other.graph.compiled.nodes.filter((n) => n.scope !== undefined);
  assert.ok(drawn.some((n) => expectedBadge(diff, n) === 'chg-added'), 'another model has nodes of its own');
  assert.deepEqual(await badges(page, 'compiled'),
    Object.fromEntries(drawn.map((n) => [String(n.node_id), expectedBadge(diff, n)])));
  const removed = diff.nodes.framework.removed;
  assert.ok(removed.length > 0);
  assert.deepEqual(await page.$$eval('#diff .diff-removed[data-layer="framework"] .removed', (s) => s.map((e) => e.textContent)),
    removed.slice(0, 12));
  // An added framework node's link selects it in its graph, and its details say so.
  const first = await page.textContent('#diff .diff-added[data-layer="framework"] a >> nth=0');
  assert.equal(first, diff.nodes.framework.added[0]);
  await page.click('#diff .diff-added[data-layer="framework"] a >> nth=0');
  assert.equal(await page.textContent('#details h3'), first);
  assert.ok((await page.textContent('#details')).includes('not in the baseline run: added'));
  const id = other.graph.framework.nodes.find((n) => n.name === first).node_id;
  assert.deepEqual(await page.$$eval('#framework-graph g.node.selected', (gs) => gs.map((g) => Number(g.dataset.nodeId))), [id]);
  assert.deepEqual(problems, []);
});

test('inspector-cli serve: the same page over HTTP, and nothing but its files', async () => {
  const run = runs.twoBranch;
  const {server, exited, address} = startServe(cli, run.dir);
  try {
    const {url, folder} = await address;
    assert.equal(folder, run.dir);
    const port = Number(new URL(url).port);
    assert.ok(port > 0);
    await openPage(url);
    await checkPage(page, run, {full: false});
    assert.deepEqual(problems, []);
  
    const graph = await fetch(url + 'graph.json');
    assert.equal(graph.status, 200);
    assert.equal(await graph.text(), fs.readFileSync(path.join(run.dir, 'graph.json'), 'utf8'), 'the file as it is');
    assert.equal((await fetch(url + 'no-such-file.json')).status, 404);
    assert.equal((await fetch(url + 'capture.json')).status, 404, 'only the listed files are served');
    assert.equal((await fetch(url, {method: 'POST', body: 'x'})).status, 405);
    // Sent raw: fetch would normalise the dots away before they reach the server.
    for (const target of ['/../capture.json', '/..%2fcapture.json', '//etc/passwd', '/../' + path.basename(run.dir) + '/capture.json']) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 404 /, target);
      assert.ok(!answer.includes(run.capture.slice(0, 40)), target);
    }
    // A page from elsewhere whose name resolves to loopback (DNS rebinding) is refused.
    assert.match(await rawRequest(port, `GET /graph.json HTTP/1.1\r\nHost: rebound.example:${port}\r\n\r\n`),
      /^HTTP\/1\.1 403 /);
  } finally {
    server.kill('SIGINT');
  }
  assert.deepEqual(await exited, {code: 0, signal: null}, 'serve stops cleanly on SIGINT');
});

test('a trace alone: ops-debug profile\'s timeline.json and roofline.svg as report.html', async () => {
  const profile = runs.profile;
  assert.match(inspector(['export', '--input-dir', profile.dir, '--format', 'html']).stdout, /wrote .*report\.html/);
  await openPage(pathToFileURL(path.join(profile.dir, 'report.html')).href);
  await checkTimelinePage(page, profile);
  if (process.env.OPSCOPE_WEB_TIMELINE_SCREENSHOT) {
    const kernel = profile.events.findIndex((e) => e.cat === 'kernel');
    await clickTask(page, (t) => t.index === kernel);
    await page.screenshot({path: process.env.OPSCOPE_WEB_TIMELINE_SCREENSHOT});
  }
  assert.deepEqual(problems, []);
});

test('a trace alone, served: the page asks only for what the folder holds', async () => {
  const profile = runs.profile;
  const {server, exited, address} = startServe(cli, profile.dir);
  try {
    const {url} = await address;
    const asked = [];
    const listen = (r) => asked.push(new URL(r.url()).pathname);
    page.on('request', listen);
    await openPage(url);
    page.off('request', listen);
    await checkTimelinePage(page, profile, {full: false});
    assert.deepEqual(problems, [], 'no 404 for graph.json or summary.json');
    assert.ok(!asked.some((p) => /^\/(graph|summary)\.json$/.test(p)), asked.join(' '));
    assert.ok(asked.includes('/files.json') && asked.includes('/timeline.json'), asked.join(' '));
    assert.equal((await fetch(url + 'roofline.svg')).headers.get('content-type'), 'image/svg+xml');
  } finally {
    server.kill('SIGINT');
  }
  assert.deepEqual(await exited, {code: 0, signal: null});
});

test('the page without data: a lone timeline.json picked, with its chart; a hostile chart refused', async () => {
  const profile = runs.profile;
  const blank = pathToFileURL(path.join(sourceDir, 'web', 'index.html')).href;
  problems = [];
  await page.goto(blank);
  assert.ok(await page.isVisible('#load-panel'));
  await page.setInputFiles('#load-files', [path.join(profile.dir, 'timeline.json'), path.join(profile.dir, 'roofline.svg')]);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 10_000});
  await checkTimelinePage(page, profile, {full: false});
  assert.deepEqual(problems, []);

  const hostile = path.join(work, 'hostile.svg');
  fs.writeFileSync(hostile, '<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/>' +
    '<foreignObject><img xmlns="http://www.w3.org/1999/xhtml" src="x" onerror="window.pwned = 1"/></foreignObject></svg>');
  await page.goto(blank);
  await page.setInputFiles('#load-files', [path.join(profile.dir, 'timeline.json'), hostile]);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 10_000});
  assert.match(await page.textContent('#roofline'), /roofline\.svg refused: <foreignObject> is not allowed/);
  assert.equal(await page.locator('#roofline svg').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);

  // Two traces at once are not a run.
  await page.goto(blank);
  await page.setInputFiles('#load-files', [path.join(profile.dir, 'timeline.json'), runs.twoBranch.dir + '/trace.json']);
  assert.match(await page.textContent('#load-error'), /or one trace \(timeline\.json\) alone/);

  // Nor are the files of two runs: each names the run that wrote it.
  await page.goto(blank);
  await page.setInputFiles('#load-files', [runs.twoBranch.dir + '/graph.json', runs.twoBranch.dir + '/trace.json',
    runs.resnet.dir + '/summary.json']);
  const summaryRun = JSON.parse(fs.readFileSync(runs.resnet.dir + '/summary.json', 'utf8')).run.id;
  await page.waitForFunction(() => document.getElementById('load-error').textContent !== '', null, {timeout: 10_000});
  const twoRuns = await page.textContent('#load-error');
  assert.match(twoRuns, /files of two runs/);
  assert.ok(twoRuns.includes('summary.json of run ' + summaryRun), twoRuns);
  assert.ok(await page.isVisible('#load-panel'));
});

// ops-debug sweep's page on the example trap: one heatmap cell per block, the
// fast wrong block=512 crossed and labelled FAILED, the best a passed cell.
test('ops-debug sweep: sweep.html has its heatmap cells and a FAILED cell', async () => {
  const opsDebug = path.join(binaryDir, 'bin', 'ops-debug');
  const plugin = path.join(binaryDir, 'lib', 'libperf_ops.so');
  assert.ok(fs.existsSync(opsDebug) && fs.existsSync(plugin), `build ops-debug and perf_ops first (${opsDebug}, ${plugin})`);
  const dir = path.join(work, 'sweep');
  const r = spawnSync(opsDebug, ['sweep', '--plugin', plugin, '--op', 'sweep_trap', '--input-shapes', '[3001]',
    '--peak-bw', '20', '--peak-flops', '100', '--iters', '3', '--output-dir', dir], {encoding: 'utf8', timeout: 60_000});
  assert.equal(r.status, 0, r.stderr);
  const sweep = JSON.parse(fs.readFileSync(path.join(dir, 'sweep.json'), 'utf8'));
  problems = [];
  await page.goto(pathToFileURL(path.join(dir, 'sweep.html')).href);
  const cells = page.locator('#heatmap svg g.cell');
  assert.equal(await cells.count(), sweep.candidates.length);
  assert.equal(await cells.count(), 5);
  const failed = page.locator('#heatmap svg g.cell.failed');
  assert.equal(await failed.count(), 1);
  assert.equal(await failed.getAttribute('data-x'), '512');
  assert.match(await failed.textContent(), /FAILED/);
  assert.equal(await failed.locator('line.cross').count(), 2);
  assert.ok(await failed.isVisible());
  // The thick border is the best's only when the best is the fastest or
  // beats the current beyond the noise: a current kept within the noise of a
  // faster candidate is not marked best.
  const best = page.locator('#heatmap svg g.cell.best');
  const marked = sweep.faster || sweep.best.index === sweep.fastest.index;
  assert.equal(await best.count(), marked ? 1 : 0);
  if (marked) {
    assert.equal(await best.getAttribute('data-x'), String(sweep.best.tunables.block));
    assert.ok(!(await best.getAttribute('class')).includes('failed'));
  }
  // The legend is not cut off: its line ends inside the drawing.
  const legendEnd = await page.locator('#heatmap svg text.legend').evaluate(t => t.getBBox().x + t.getBBox().width);
  const svgWidth = await page.locator('#heatmap svg').evaluate(s => s.viewBox.baseVal.width);
  assert.ok(legendEnd <= svgWidth, `legend ends at ${legendEnd} past the drawing's width ${svgWidth}`);
  assert.equal(await page.locator('#candidates tr.failed').count(), 1);
  assert.deepEqual(problems, []);
});

test('a diagnosis: diagnosis.json as report.html, the failing launch marked and selected, the causes in order', async () => {
  const diag = runs.diagnosis;
  assert.match(inspector(['export', '--input-dir', diag.dir, '--format', 'html']).stdout, /wrote .*report\.html/);
  await openPage(pathToFileURL(path.join(diag.dir, 'report.html')).href);
  await checkDiagnosisPage(page, diag);
  if (process.env.OPSCOPE_WEB_DIAGNOSIS_SCREENSHOT) {
    await page.click('#causes li.cause[data-rank="1"]');
    await page.mouse.move(0, 0);
    await page.screenshot({path: process.env.OPSCOPE_WEB_DIAGNOSIS_SCREENSHOT});
  }
  assert.deepEqual(problems, []);
});

test('a diagnosis, served: the page comes built from the folder\'s diagnosis.json', async () => {
  const diag = runs.diagnosis;
  const {server, exited, address} = startServe(cli, diag.dir);
  try {
    const {url} = await address;
    await openPage(url);
    await checkDiagnosisPage(page, diag, {full: false});
    assert.deepEqual(problems, []);
    assert.deepEqual(await (await fetch(url + 'diagnosis.json')).json(), diag.diagnosis);
  } finally {
    server.kill('SIGINT');
  }
  assert.deepEqual(await exited, {code: 0, signal: null});
});

// The real entry point: ops-debug diagnose writes diagnosis.html beside diagnosis.json.
test('ops-debug diagnose: diagnosis.html of a clean run draws its trajectory', async () => {
  const opsDebug = path.join(binaryDir, 'bin', 'ops-debug');
  const plugin = path.join(binaryDir, 'lib', 'libmy_ops.so');
  assert.ok(fs.existsSync(opsDebug) && fs.existsSync(plugin), `build ops-debug and my_ops first (${opsDebug}, ${plugin})`);
  const dir = path.join(work, 'diagnose');
  const r = spawnSync(opsDebug, ['diagnose', '--plugin', plugin, '--op', 'my_norm', '--input-shapes', '[4,64]',
    '--quiet-program', '--output-dir', dir], {encoding: 'utf8', timeout: 60_000});
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.stdout.includes(`page ${dir}/diagnosis.html\n`), r.stdout);
  const diag = readDiagnosis(dir);
  await openPage(pathToFileURL(path.join(dir, 'diagnosis.html')).href);
  assert.equal((await timelineLanes(page)).length, diag.lanes.length);
  assert.equal((await drawnTasks(page)).length, diag.records.length);
  assert.equal((await marked(page, 'failing', 'seq')).length, 0, 'a clean run has no failing launch');
  assert.match(await page.textContent('#diagnosis-status'), /^clean/);
  assert.match(await page.textContent('#causes-none'), /the run is clean/);
  assert.deepEqual(problems, []);
});

test('bad input: one line, exit 2, no half-written report', () => {
  const empty = path.join(work, 'empty');
  fs.mkdirSync(empty);
  for (const args of [['serve', empty, '--port', '0'], ['export', '--input-dir', empty, '--format', 'html']]) {
    const r = inspector(args, 2);
    assert.match(r.stderr, /^inspector-cli: error: .*graph\.json: missing.*\n$/);
  }
  assert.deepEqual(fs.readdirSync(empty), []);
  const broken = path.join(work, 'broken_diagnosis');
  fs.mkdirSync(broken);
  fs.writeFileSync(path.join(broken, 'diagnosis.json'), '{"schema": "opscope.diagnosis/1", "status": "crashed"');
  for (const args of [['serve', broken, '--port', '0'], ['export', '--input-dir', broken, '--format', 'html']]) {
    const b = inspector(args, 2);
    assert.match(b.stderr, new RegExp(`^inspector-cli: error: .*${broken}/diagnosis\\.json: not valid JSON .*expected an opscope\\.diagnosis/1 file.*\\n$`));
  }
  assert.deepEqual(fs.readdirSync(broken), ['diagnosis.json']);
  const r = inspector(['export', '--input-dir', runs.twoBranch.dir, '--format', 'pdf'], 2);
  assert.match(r.stderr, /--format 'pdf': expected json, html or all/);
});
