// startup: how long the companion server takes from spawn to its first answered
// JSON-RPC request, and its idle memory, against a baseline run in the same script:
// a bare Node process that listens on a Unix socket and answers one framed message.
//
//   npm run bench -- startup [runs=7]
//
// Last line: startup: cold_start_ms=<n> idle_rss_mb=<n> baseline_ms=<n> baseline_rss_mb=<n> cold_start_ratio=<n> rss_ratio=<n>
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, median, round, rssMiB } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverMain = path.join(repo, 'server', 'dist', 'main.js');
if (!fs.existsSync(serverMain)) {
  console.error(`${serverMain} is missing: run scripts/setup (or npm run build) first`);
  process.exit(1);
}
const runs = Number(process.argv[2] ?? 7);
const IDLE_MS = 2000;

// The baseline: node startup + listen + one framed reply, nothing else.
const BASELINE = `
const net = require('node:net');
const sock = process.argv[1];
net.createServer(c => c.on('data', () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} });
  c.write('Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body);
})).listen(sock, () => process.stdout.write('CELLMATE_READY ' + sock + '\\n'));
`;

function frame(obj) {
  const body = JSON.stringify(obj);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Spawns, waits for the ready line, sends one request, waits for a framed reply. */
async function once(argsFor) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-'));
  fs.chmodSync(dir, 0o700);
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  const sock = path.join(dir, 's');
  const t0 = performance.now();
  const child = spawn(process.execPath, argsFor(sock, workspace), {
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, CELLMATE_CONFIG: path.join(dir, 'none.json') }
  });
  try {
    await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('CELLMATE_READY')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before ready`)));
    });
    await new Promise((resolve, reject) => {
      const c = net.connect(sock);
      let got = '';
      c.on('connect', () =>
        c.write(frame({ jsonrpc: '2.0', id: 1, method: 'cellmate/hello', params: { protocolVersion: 1 } }))
      );
      c.on('data', (d) => {
        got += d;
        const m = /Content-Length: (\d+)\r\n\r\n/.exec(got);
        if (m && Buffer.byteLength(got) >= m.index + m[0].length + Number(m[1])) {
          c.end();
          resolve();
        }
      });
      c.on('error', reject);
    });
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const rss = rssMiB(child.pid);
    return { ms, rss };
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const cellmate = [];
const baseline = [];
await once((sock) => ['-e', BASELINE, sock]); // warm the file cache
await once((sock, ws) => [serverMain, '--socket', sock, '--workspace', ws]);
for (let i = 0; i < runs; i++) {
  baseline.push(await once((sock) => ['-e', BASELINE, sock]));
  cellmate.push(await once((sock, ws) => [serverMain, '--socket', sock, '--workspace', ws]));
}
const c = { ms: median(cellmate.map((r) => r.ms)), rss: median(cellmate.map((r) => r.rss)) };
const b = { ms: median(baseline.map((r) => r.ms)), rss: median(baseline.map((r) => r.rss)) };
console.log(machineLine());
console.log(`runs: ${runs} each, alternating; idle wait ${IDLE_MS} ms before reading RSS`);
console.log(`cellmate ms: ${cellmate.map((r) => round(r.ms)).join(' ')}`);
console.log(`baseline ms: ${baseline.map((r) => round(r.ms)).join(' ')}`);
console.log(
  `startup: cold_start_ms=${round(c.ms)} idle_rss_mb=${round(c.rss)} baseline_ms=${round(b.ms)} baseline_rss_mb=${round(b.rss)} cold_start_ratio=${round(c.ms / b.ms, 2)} rss_ratio=${round(c.rss / b.rss, 2)}`
);
