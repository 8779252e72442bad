// What every browser test starts from: the build's inspector-cli, the
// source tree, Debian's chromium and playwright-core. Anything missing is a
// failure that names the fix, never a skip.
//
//   const env = await browserEnv('web_ui_test', 'ui_test.mjs');
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function browserEnv(name, script) {
  const binaryDir = process.argv[2] || process.env.OPSCOPE_BINARY_DIR;
  const sourceDir = process.argv[3] || process.env.OPSCOPE_SOURCE_DIR || path.resolve(here, '../..');
  const chromiumPath = process.env.OPSCOPE_CHROMIUM || '/usr/bin/chromium';
  const cli = binaryDir && path.join(binaryDir, 'bin', 'inspector-cli');
  const die = (message) => {
    console.error(`${name}: ${message}`);
    process.exit(1);
  };
  if (!binaryDir || !fs.existsSync(cli)) die(`inspector-cli not found (usage: node ${script} BINARY_DIR SOURCE_DIR); looked for ${cli}`);
  if (!fs.existsSync(chromiumPath)) die(`${chromiumPath} is missing: install Debian's chromium (setup.sh does: apt-get install chromium)`);
  let chromium;
  try {
    ({chromium} = await import('playwright-core'));
  } catch (e) {
    die(`playwright-core is not installed in ${here}/node_modules: run \`npm ci --prefix ${path.relative(process.cwd(), here) || '.'}\` (setup.sh does) [${e.message}]`);
  }
  return {here, binaryDir, sourceDir, chromiumPath, cli, chromium, die};
}

// A run's graph.json as the page reads it: version 3's columns as lists of
// objects, by the page's own web/graph_rows.js (which the test checks
// against what the page draws), not by a second reader written here.
export function readGraphJson(file) {
  createRequire(import.meta.url)(path.resolve(here, '../../web/graph_rows.js'));
  return globalThis.opscope.graphRows(JSON.parse(fs.readFileSync(file, 'utf8')));
}

// `CLI serve DIR` on a free port (CLI: browserEnv's inspector-cli): the process, its exit, and the
// folder and address it says it serves (read from its first line).
export function startServe(cli, dir) {
  const server = spawn(cli, ['serve', dir, '--port', '0'], {stdio: ['ignore', 'pipe', 'pipe']});
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({code, signal})));
  // serve reads the folder before it prints its address, which on a loaded
  // machine and a large trace takes a while: the wait is for that line or for
  // serve's exit, never a fixed time (ctest's TIMEOUT stops a hang).
  const address = new Promise((resolve, reject) => {
    let out = '', err = '';
    server.stderr.on('data', (d) => { err += d; });
    server.on('exit', (code, signal) =>
      reject(new Error(`serve exited (${signal || code}) before printing its address: ${out}${err}`)));
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^serving (.*) at (http:\/\/127\.0\.0\.1:\d+\/)\n/m);
      if (m) resolve({folder: m[1], url: m[2]});
    });
  });
  address.catch(() => {});  // a caller that only awaits `exited` must not see an unhandled rejection
  return {server, exited, address};
}
