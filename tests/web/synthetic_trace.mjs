// A big trace.json in the format inspector-cli run writes (Chrome Trace
// Event Format, opscope.trace/1: one X event per task with its roofline args,
// s/f flow pairs for cross-stream dependencies), for the timeline's scale
// test. Tasks follow each other on each stream with small gaps; every
// FLOW_EVERY-th task of a stream waits for the latest task that ended on the
// next stream. Durations are drawn from a seeded generator, so a run is
// repeatable; what the test checks it reads back from the returned arrays,
// never from constants.
import fs from 'node:fs';

export const OP_TYPES = ['MatMul', 'Add', 'Relu', 'Sigmoid', 'Mul', 'Conv', 'Softmax', 'LayerNormalization'];
const FLOW_EVERY = 16;

// xorshift32: the same trace on every run.
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

// Writes `path`; returns the tasks as typed arrays (ts/dur in ns, op type
// index, stream), their names, and the flows as [producer, consumer] task ids.
export function writeSyntheticTrace(path, {tasks = 1_000_000, streams = 4} = {}) {
  const next = rng(12345);
  const ts = new Float64Array(tasks), dur = new Float64Array(tasks);
  const op = new Uint8Array(tasks), stream = new Uint8Array(tasks);
  const clock = new Float64Array(streams);
  const lastOn = new Int32Array(streams).fill(-1);
  const flows = [];
  const fd = fs.openSync(path, 'w');
  let buf = [];
  const out = (s) => {
    buf.push(s);
    if (buf.length >= 4096) {
      fs.writeSync(fd, buf.join(''));
      buf = [];
    }
  };
  const us = (ns) => (ns / 1000).toFixed(3);
  out('{"schema":"opscope.trace/1","displayTimeUnit":"ns","traceEvents":[\n');
  out('{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"cpu"}},\n');
  for (let s = 0; s < streams; ++s) out(`{"ph":"M","name":"thread_name","pid":1,"tid":${s},"args":{"name":"compute ${s}"}},\n`);
  let flowId = 1;
  for (let i = 0; i < tasks; ++i) {
    const s = i % streams, o = Math.floor(next() * OP_TYPES.length);
    // Mostly short tasks, a few long ones: a zoomed-out view has both columns and bars.
    const d = next() < 0.002 ? 200_000 + Math.floor(next() * 800_000) : 500 + Math.floor(next() * 4500);
    let start = clock[s] + 100 + Math.floor(next() * 900);
    let waitsFor = -1;
    if (i >= streams && Math.floor(i / streams) % FLOW_EVERY === 0) {
      waitsFor = lastOn[(s + 1) % streams];
      if (waitsFor >= 0) start = Math.max(start, ts[waitsFor] + dur[waitsFor] + 50);
    }
    ts[i] = start;
    dur[i] = d;
    op[i] = o;
    stream[i] = s;
    clock[s] = start + d;
    lastOn[s] = i;
    const type = OP_TYPES[o], bytes = 4096 + (i % 7) * 1024, flops = type === 'MatMul' || type === 'Conv' ? bytes * 8 : bytes / 4;
    out(`{"ph":"X","pid":1,"tid":${s},"ts":${us(start)},"dur":${us(d)},"name":"${nameOf(i)}","cat":"kernel","args":{` +
      `"task_id":${i},"node_id":${i},"op_id":"0x${i.toString(16)}","op_type":"${type}","kernel":"${type.toLowerCase()}_cpu",` +
      `"grid":[1,1,1],"block":[256,1,1],"bound":"memory","lower_bound_us":0.1,"efficiency":0.5,"bytes":${bytes},"flops":${flops}}},\n`);
    if (waitsFor >= 0) {
      const p = waitsFor;
      out(`{"ph":"s","id":${flowId},"pid":1,"tid":${stream[p]},"ts":${us(ts[p])},"cat":"dependency","name":"event ${flowId}"},\n`);
      out(`{"ph":"f","bp":"e","id":${flowId},"pid":1,"tid":${s},"ts":${us(start)},"cat":"dependency","name":"event ${flowId}"},\n`);
      flows.push([p, i]);
      ++flowId;
    }
  }
  // The last event without a trailing comma.
  out('{"ph":"M","name":"process_sort_index","pid":1,"tid":0,"args":{"sort_index":0}}\n]}\n');
  fs.writeSync(fd, buf.join(''));
  fs.closeSync(fd);
  return {ts, dur, op, stream, flows, tasks, streams};
}

// The node name of task i: unique, so a search for one finds one task.
export function nameOf(i) {
  return `/block${Math.floor(i / 64)}/node_${i}`;
}
