// The timeline at scale, in a real browser (Debian's chromium, headless,
// driven by playwright-core): a trace.json of 1,000,000 tasks on 4 streams
// (synthetic_trace.mjs) served by `inspector-cli serve`. It prints the time to
// the first drawn frame and the time of a pan step and a zoom step, and
// asserts only bounds no loaded machine misses; then the legend, the axis
// unit, a dragged range's op-type counts, search by node name and the
// selected task's dependency arrows, each against what the test computes
// from the trace it wrote. Screenshots go to BINARY_DIR/web-screenshots/.
//
//   node tests/web/timeline_scale_test.mjs BINARY_DIR SOURCE_DIR
//
// OPSCOPE_SCALE_TASKS sets the task count (default 1,000,000).
// Missing chromium or node_modules is a failure with the fix named, never a skip.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {browserEnv, startServe} from './browser_env.mjs';
import {fileURLToPath} from 'node:url';
import {writeSyntheticTrace, nameOf, OP_TYPES} from './synthetic_trace.mjs';

const {here, binaryDir, sourceDir, chromiumPath, cli, chromium, die} = await browserEnv('timeline_scale_test', 'timeline_scale_test.mjs');
const TASKS = Number(process.env.OPSCOPE_SCALE_TASKS || 1_000_000);
// Bounds that only a frozen page misses: the figures printed are what matter.
const LOAD_LIMIT_MS = 90_000, STEP_LIMIT_MS = 5_000;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeline_scale_test_'));
const shots = path.join(binaryDir, 'web-screenshots');
let browser, page, server, data;
const problems = [];

// The page parses "%.3f" µs texts; so does this, so both sum the same doubles.
const usOf = (ns) => Number((ns / 1000).toFixed(3));

async function serve(dir) {
  const started = startServe(cli, dir);
  server = started.server;
  return (await started.address).url;
}

const hook = (fn, arg) => page.evaluate(fn, arg);
const lastFrame = () => hook(() => opscope.app.timeline.lastFrame());

// One wheel step over the plot, timed in the page: the ms from the event to
// the end of the frame it asked for, and the ms that frame's drawing took.
function step(deltaY, shiftKey = false) {
  return page.evaluate(async ([deltaY, shiftKey]) => {
    const v = opscope.app.timeline, r = v.canvas.getBoundingClientRect(), before = v.frame, t0 = performance.now();
    v.host.dispatchEvent(new WheelEvent('wheel', {deltaY, shiftKey, clientX: r.left + r.width / 2, clientY: r.top + 60,
      bubbles: true, cancelable: true}));
    while (v.frame === before) await new Promise(requestAnimationFrame);
    return {ms: performance.now() - t0, drawMs: v.last.drawMs};
  }, [deltaY, shiftKey]);
}

async function plotCentre() {
  const f = await lastFrame();
  return {x: (f.plot.x0 + f.plot.x1) / 2, y: f.plot.y0 + 40, plot: f.plot};
}

before(async () => {
  const t0 = Date.now();
  data = writeSyntheticTrace(path.join(work, 'trace.json'), {tasks: TASKS});
  console.log(`wrote ${TASKS.toLocaleString('en-US')} tasks, ${data.flows.length.toLocaleString('en-US')} dependencies ` +
    `(${(fs.statSync(path.join(work, 'trace.json')).size / 1e6).toFixed(0)} MB) in ${Date.now() - t0} ms`);
  fs.mkdirSync(shots, {recursive: true});
  const url = await serve(work);
  browser = await chromium.launch({executablePath: chromiumPath, headless: true});
  page = await browser.newPage({viewport: {width: 1600, height: 950}});
  page.on('console', (m) => m.type() === 'error' && problems.push('console: ' + m.text()));
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  const start = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => window.opscope && opscope.app && opscope.app.timeline.frame > 0,
    null, {timeout: LOAD_LIMIT_MS * 2, polling: 200});
  const loadMs = Date.now() - start;
  const firstDraw = await hook(() => opscope.app.timeline.firstDrawAt);
  console.log(`load: first frame ${loadMs} ms after navigation (page clock ${firstDraw.toFixed(0)} ms)`);
  assert.ok(loadMs < LOAD_LIMIT_MS, `${TASKS} tasks took ${loadMs} ms to the first frame`);
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill('SIGINT');
  fs.rmSync(work, {recursive: true, force: true});
});

test('every task is in the zoomed-out frame, aggregated per pixel; the legend lists the op types present', async () => {
  const f = await lastFrame();
  assert.equal(f.tasks, TASKS, 'the fitted frame covers every task');
  assert.ok(f.columns > 0, 'tasks narrower than a pixel share columns');
  assert.ok(f.bars + f.columns < TASKS / 10, `a frame draws per pixel, not per task (${f.bars} bars, ${f.columns} columns)`);
  const present = [...new Set(data.op)].map((o) => OP_TYPES[o]).sort();
  const legend = await page.$$eval('#timeline-legend .legend-item', (items) => items.map((i) => i.dataset.key));
  assert.deepEqual([...legend].sort(), present);
  const swatches = await page.$$eval('#timeline-legend .legend-item i', (is) => is.map((i) => getComputedStyle(i).backgroundColor));
  assert.equal(new Set(swatches).size, swatches.length, 'each op type its own colour');
  assert.deepEqual(problems, []);
  await page.screenshot({path: path.join(shots, 'timeline-1m-fit.png')});
});

test('zoom and pan: each wheel step draws a frame; the axis unit goes from ms or s to ns', async () => {
  const zoomedOut = (await lastFrame()).axis.unit;
  assert.ok(zoomedOut === 'ms' || zoomedOut === 's', `zoomed out the axis is in ${zoomedOut}`);
  // A real wheel first: the page zooms on the browser's own event.
  const c = await plotCentre(), span = (f) => f.range[1] - f.range[0], before = await lastFrame();
  await page.mouse.move(c.x, c.y);
  await page.mouse.wheel(0, -1000);
  await page.waitForFunction((f) => opscope.app.timeline.frame > f, before.frame, {polling: 'raf'});
  assert.ok(span(await lastFrame()) < span(before) / 2, 'a wheel step zooms in');
  const zooms = [];
  for (let i = 0; i < 40 && (await lastFrame()).axis.unit !== 'ns'; ++i) zooms.push(await step(-1000));
  const zoomedIn = await lastFrame();
  assert.equal(zoomedIn.axis.unit, 'ns', `after ${zooms.length} zoom steps the span is ${zoomedIn.range[1] - zoomedIn.range[0]} µs`);
  assert.ok(zoomedIn.axis.labels.every((l) => l.endsWith(' ns')), zoomedIn.axis.labels.join(', '));
  // Back out to a window of a few hundred tasks per lane, then pan it sideways.
  while (span(await lastFrame()) < 2000) await step(1000);
  const pans = [];
  for (let i = 0; i < 5; ++i) pans.push(await step(300, true));
  const panned = await lastFrame();
  const worst = (xs, k) => Math.max(...xs.map((x) => x[k]));
  const median = (xs, k) => xs.map((x) => x[k]).sort((a, b) => a - b)[xs.length >> 1];
  console.log(`zoom step: ${zooms.length} steps, median ${median(zooms, 'ms').toFixed(1)} ms to the next frame ` +
    `(draw ${median(zooms, 'drawMs').toFixed(1)} ms), worst ${worst(zooms, 'ms').toFixed(1)} ms`);
  console.log(`pan step: median ${median(pans, 'ms').toFixed(1)} ms to the next frame (draw ${median(pans, 'drawMs').toFixed(1)} ms), ` +
    `worst ${worst(pans, 'ms').toFixed(1)} ms; ${panned.bars} bars, ${panned.columns} columns, ${panned.labels} names in the frame`);
  assert.ok(worst([...zooms, ...pans], 'ms') < STEP_LIMIT_MS);
  assert.ok(panned.range[0] > zoomedIn.range[0], 'shift+wheel panned later in time');
  assert.ok(panned.labels > 0, 'bars wide enough carry their names');
  await page.screenshot({path: path.join(shots, 'timeline-1m-zoomed.png')});
  assert.deepEqual(problems, []);
});

test('a dragged range: its table counts per op type what the trace holds in it', async () => {
  await page.dblclick('#timeline', {position: {x: 400, y: 10}});  // on the axis: fits, selects nothing
  await page.waitForFunction(() => !opscope.app.timeline.pending);
  const {plot} = await plotCentre();
  const x0 = plot.x0 + (plot.x1 - plot.x0) * 0.3, x1 = plot.x0 + (plot.x1 - plot.x0) * 0.34, y = plot.y0 + 60;
  await page.mouse.move(x0, y);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, y, {steps: 3});
  await page.mouse.move(x1, y, {steps: 3});
  await page.mouse.up();
  await page.waitForSelector('#range-table');
  const [t0, t1] = (await lastFrame()).rangeSel;
  assert.ok(t1 > t0);
  const expected = new Map();
  for (let i = 0; i < TASKS; ++i) {
    const ts = usOf(data.ts[i]), dur = usOf(data.dur[i]);
    if (ts < t1 && ts + dur > t0) expected.set(OP_TYPES[data.op[i]], (expected.get(OP_TYPES[data.op[i]]) || 0) + 1);
  }
  assert.ok(expected.size > 1, 'the range holds several op types');
  const shown = new Map(await page.$$eval('#range-table tr[data-op-type]', (trs) =>
    trs.map((tr) => [tr.dataset.opType, Number(tr.querySelector('td.count').textContent.replace(/,/g, ''))])));
  assert.deepEqual(shown, expected);
  const total = [...expected.values()].reduce((a, b) => a + b, 0);
  console.log(`range ${(t1 - t0).toFixed(0)} µs: ${total.toLocaleString('en-US')} tasks in ${expected.size} op types`);
  await page.screenshot({path: path.join(shots, 'timeline-1m-range.png')});
  assert.deepEqual(problems, []);
});

test('search by node name selects the task, brings it into view, and only its dependencies are drawn', async () => {
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !opscope.app.timeline.pending);
  assert.deepEqual((await lastFrame()).flows, [], 'nothing selected: no dependency drawn');
  // A consumer of a dependency in the middle of the trace.
  const [producer, consumer] = data.flows[data.flows.length >> 1];
  await page.fill('#timeline-search', nameOf(consumer));
  await page.press('#timeline-search', 'Enter');
  await page.waitForFunction(() => !opscope.app.timeline.pending);
  const sel = await hook(() => opscope.app.selection && opscope.app.selection.task && opscope.app.selection.task.task_id);
  assert.equal(sel, consumer);
  const box = await hook((i) => opscope.app.timeline.taskBox(i), consumer);
  const f = await lastFrame();
  assert.ok(box && box.x0 >= f.plot.x0 && box.x1 <= f.plot.x1 && box.y0 >= f.plot.y0 && box.y1 <= f.plot.y1, 'the found task is in view');
  const mine = data.flows.filter(([p, c]) => p === consumer || c === consumer);
  assert.equal(f.flows.length, mine.length, 'the selected task\'s dependencies, no other');
  assert.ok(f.flows.every((d) => d.fromTask === consumer || d.toTask === consumer));
  assert.ok(f.flows.some((d) => d.fromTask === producer && d.toTask === consumer));
  // Drawn from the producer's end to the consumer's start.
  const arrow = f.flows.find((d) => d.fromTask === producer);
  const pbox = await hook((i) => opscope.app.timeline.taskBox(i), producer);
  if (pbox) assert.ok(Math.abs(arrow.x1 - pbox.x1) < 1.5, `arrow from ${arrow.x1}, producer ends at ${pbox.x1}`);
  assert.ok(Math.abs(arrow.x2 - box.x0) < 1.5, `arrow to ${arrow.x2}, consumer starts at ${box.x0}`);
  assert.match(await page.textContent('#timeline-search-status'), /^1 of 1$/);
  await page.screenshot({path: path.join(shots, 'timeline-1m-search.png')});
  assert.deepEqual(problems, []);
});
