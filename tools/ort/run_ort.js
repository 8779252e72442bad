#!/usr/bin/env node
// Runs an ONNX model under onnxruntime's CPU build (onnxruntime-node, installed
// by ./setup.sh into tools/ort/node_modules) the way `inspector-cli import-ort`
// wants it seen: graph optimisations at level "all" with the optimized model
// saved (SessionOptions optimized_model_filepath) and the session profiled
// (enable_profiling). Writes into OUTDIR:
//   optimized.onnx   the graph onnxruntime ran (fused and layout nodes included)
//   profile.json     onnxruntime's own profile: one model_run and its kernel events per run
//   outputs/<name>.npy with --save-outputs: the last run's graph outputs
// and prints the import-ort line that reads them.
//
//   node tools/ort/run_ort.js examples/models/resnet_small.onnx runs/ort-resnet --runs 4
//
// Inputs: --inputs a.npy,b.npy (graph input order) or name=a.npy; the rest
// are filled from --seed (floats uniform in [-1, 1), integers 0, booleans
// false), symbolic dims taken as 1. Bad usage: one line on stderr, exit 2.
'use strict';

const fs = require('fs');
const path = require('path');

function fail(msg) {
  process.stderr.write(`run_ort: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {runs: 4, seed: 0, inputs: [], level: 'all', threads: 0, saveOutputs: false, positional: []};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a}: expected a value`);
      return argv[++i];
    };
    const count = (name, v, min) => {
      if (!/^\d+$/.test(v) || Number(v) < min) fail(`${name} ${v}: expected an integer >= ${min}`);
      return Number(v);
    };
    if (a === '--runs') o.runs = count(a, value(), 1);
    else if (a === '--seed') o.seed = count(a, value(), 0);
    else if (a === '--threads') o.threads = count(a, value(), 0);
    else if (a === '--inputs') o.inputs = value().split(',').filter((s) => s.length);
    else if (a === '--level') {
      o.level = value();
      if (!['disabled', 'basic', 'extended', 'all'].includes(o.level)) {
        fail(`--level ${o.level}: expected disabled, basic, extended or all`);
      }
    } else if (a === '--save-outputs') o.saveOutputs = true;
    else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: run_ort.js MODEL.onnx OUTDIR [--runs N] [--inputs a.npy,...|name=a.npy]' +
                           ' [--seed S] [--threads N] [--level all] [--save-outputs]\n');
      process.exit(0);
    } else if (a.startsWith('--')) fail(`${a}: unknown flag`);
    else o.positional.push(a);
  }
  if (o.positional.length !== 2) fail('expected MODEL.onnx and OUTDIR (--help)');
  return o;
}

// ---- .npy (NumPy's format 1.0/2.0/3.0: magic, version, header length, a
// Python dict literal, then the C-ordered data) ----------------------------
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array], '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array], '<f2': ['float16', Uint16Array],
};

function readNpy(file) {
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    fail(`${file}: cannot read (${e.code || e.message})`);
  }
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = buf[6];
  const wide = major >= 2;
  const hlen = wide ? buf.readUInt32LE(8) : buf.readUInt16LE(8);
  const start = (wide ? 12 : 10) + hlen;
  if (start > buf.length) fail(`${file}: header runs past the end of the file`);
  const header = buf.toString('latin1', wide ? 12 : 10, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) fail(`${file}: header without descr, fortran_order and shape`);
  if (order[1] === 'True') fail(`${file}: fortran_order True (expected C order)`);
  const t = NPY_TYPES[descr[1]];
  if (!t) fail(`${file}: dtype '${descr[1]}' (expected a little-endian ${Object.keys(NPY_TYPES).join(', ')})`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  const bytes = n * t[1].BYTES_PER_ELEMENT;
  if (start + bytes > buf.length) fail(`${file}: ${n} elements of ${descr[1]} need ${bytes} bytes after the header`);
  const data = new t[1](buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + start + bytes));
  return {type: t[0] === 'bool' ? 'bool' : t[0], data: t[0] === 'bool' ? Array.from(data, Boolean) : data, dims};
}

function writeNpy(file, tensor) {
  const entry = Object.entries(NPY_TYPES).find(([, t]) => t[0] === tensor.type);
  if (!entry) return false;
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool' ? Uint8Array.from(tensor.data, (b) => (b ? 1 : 0)) : tensor.data;
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, Buffer.concat([pre, Buffer.from(header, 'latin1'),
                                       Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
  fs.renameSync(tmp, file);
  return true;
}

// ---- inputs ---------------------------------------------------------------
// xorshift32, so that a seed gives the same inputs on every machine.
function generator(seed) {
  let s = (seed ^ 0x9e3779b9) >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, int16: Int16Array,
  int8: Int8Array, uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
};

function filled(ort, meta, next) {
  const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
  const n = dims.reduce((a, b) => a * b, 1);
  if (meta.type === 'bool') return new ort.Tensor('bool', new Array(n).fill(false), dims);
  const Array_ = ARRAYS[meta.type];
  if (!Array_) fail(`graph input '${meta.name}' of type ${meta.type}: give it with --inputs`);
  const data = new Array_(n);
  if (meta.type.startsWith('float')) {
    for (let i = 0; i < n; ++i) data[i] = 2 * next() - 1;
  }  // integers stay 0: a valid index into any table
  return new ort.Tensor(meta.type, data, dims);
}

// A closed pipe (run_ort.js ... | head) ends the output, not the run.
process.stdout.on('error', () => {});

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const [model, outdir] = o.positional;
  if (!fs.existsSync(model)) fail(`${model}: no such file`);
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    fail(`onnxruntime-node is not installed (./setup.sh installs it into ${__dirname}/node_modules)`);
  }
  fs.mkdirSync(outdir, {recursive: true});
  const optimized = path.join(outdir, 'optimized.onnx');
  const prefix = path.join(outdir, `.profile-${process.pid}`);
  const options = {
    graphOptimizationLevel: o.level, optimizedModelFilePath: optimized, enableProfiling: true,
    profileFilePrefix: prefix, executionMode: 'sequential',
    // Errors only: its warning that an NCHWc model is for this machine alone goes to stderr on every run.
    logSeverityLevel: 3,
  };
  if (o.threads > 0) options.intraOpNumThreads = o.threads;
  let session;
  try {
    session = await ort.InferenceSession.create(model, options);
  } catch (e) {
    fail(`${model}: onnxruntime cannot load it: ${String(e.message).split('\n')[0]}`);
  }
  const feeds = {};
  const given = new Map();
  o.inputs.forEach((spec, i) => {
    const eq = spec.indexOf('=');
    const name = eq > 0 ? spec.slice(0, eq) : session.inputNames[i];
    if (name === undefined || !session.inputNames.includes(name)) {
      fail(`--inputs ${spec}: the model's inputs are ${session.inputNames.join(', ')}`);
    }
    given.set(name, eq > 0 ? spec.slice(eq + 1) : spec);
  });
  const next = generator(o.seed);
  for (const meta of session.inputMetadata) {
    if (given.has(meta.name)) {
      const t = readNpy(given.get(meta.name));
      feeds[meta.name] = new ort.Tensor(t.type, t.data, t.dims);
    } else {
      feeds[meta.name] = filled(ort, meta, next);
    }
  }
  let results;
  const times = [];
  for (let r = 0; r < o.runs; ++r) {
    const t0 = process.hrtime.bigint();
    try {
      results = await session.run(feeds);
    } catch (e) {
      fail(`${model}: onnxruntime failed to run it: ${String(e.message).split('\n')[0]}`);
    }
    times.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  const written = session.endProfiling();
  // The prefix is ours; onnxruntime appends the date. Renamed to one fixed name.
  const dir = path.dirname(prefix);
  const made = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(prefix)) && f.endsWith('.json'));
  const from = made.length ? path.join(dir, made[0]) : written;
  const profile = path.join(outdir, 'profile.json');
  fs.renameSync(from, profile);
  if (o.saveOutputs) {
    const outs = path.join(outdir, 'outputs');
    fs.mkdirSync(outs, {recursive: true});
    for (const name of session.outputNames) {
      const t = results[name];
      if (!writeNpy(path.join(outs, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.npy`), t)) {
        process.stderr.write(`run_ort: output '${name}' of type ${t.type} not saved (no .npy type for it)\n`);
      }
    }
  }
  const us = times.map((t) => t.toFixed(0)).join(' ');
  process.stdout.write(`onnxruntime ${ort.env.versions.common} ran ${model} ${o.runs} time(s): ${us} us\n`);
  process.stdout.write(`wrote ${optimized}\nwrote ${profile}\n`);
  process.stdout.write(`next: inspector-cli import-ort --model ${model} --optimized ${optimized} --profile ${profile}` +
                       ` --output-dir ${path.join(outdir, 'run')}\n`);
}

main();
