// Companion memory under a flood (the shared frame budget, server/src/framing/frame-budget.ts):
// a debug adapter (server/test/fixtures/flood/flood-server.mjs, fault injection) answers one
// request with a single FLOOD_MB-byte message (default 180, the size that took the companion
// from 165 MB to ~1 GB). Each round runs a fresh Node process that reads it through the
// companion's own adapter start-up and DAP client: `capped` with the default 64 MiB budget,
// `uncapped` with an unlimited one (what a per-frame cap alone allowed), alternating, ROUNDS
// each (default 3). Prints the peak RSS (maxRSS) medians and capped/uncapped.
// Needs server/dist (npm run build:ts).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, median, round } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FLOOD = path.join(here, '../server/test/fixtures/flood/flood-server.mjs');
const MB = Number(process.env.FLOOD_MB ?? 180);
const ROUNDS = Number(process.argv[2] ?? 3);

// One reading process: prints {peak_mb, outcome}.
const child = `
const { startAdapterProcess } = await import(${JSON.stringify(path.join(here, '../server/dist/dap/adapter-process.js'))});
const { DapClient } = await import(${JSON.stringify(path.join(here, '../server/dist/dap/dap-client.js'))});
const { FrameBudget } = await import(${JSON.stringify(path.join(here, '../server/dist/framing/index.js'))});
const budget = process.argv[1] === 'capped' ? new FrameBudget(64 * 2 ** 20) : new FrameBudget(Infinity);
const proc = await startAdapterProcess([process.execPath, ${JSON.stringify(FLOOD)}, '--dap', '--bytes', String(${MB} * 2 ** 20)], { cwd: process.cwd(), name: 'flood', budget });
const dap = new DapClient(proc.reader, proc.writer, 'flood', false);
await dap.request('initialize', { adapterID: 'flood' });
const outcome = await dap.request('evaluate', { expression: 'x' }, { timeoutMs: 300000 }).then((b) => 'answered ' + b.result.length, (e) => 'stopped');
proc.kill();
console.log(JSON.stringify({ peak_mb: process.resourceUsage().maxRSS / 1024, outcome }));
process.exit(0);
`;

const runs = { capped: [], uncapped: [] };
const outcomes = {};
for (let i = 0; i < ROUNDS; i++) {
  for (const variant of i % 2 ? ['uncapped', 'capped'] : ['capped', 'uncapped']) {
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', child, variant], {
        encoding: 'utf8',
        maxBuffer: 1 << 20
      })
        .trim()
        .split('\n')
        .at(-1)
    );
    runs[variant].push(out.peak_mb);
    outcomes[variant] = out.outcome;
    console.log(`${variant}: peak ${round(out.peak_mb)} MB (${out.outcome})`);
  }
}
console.log(machineLine());
const capped = median(runs.capped);
const uncapped = median(runs.uncapped);
console.log(
  `frame-budget: flood_mb=${MB} capped_peak_rss_mb=${round(capped)} uncapped_peak_rss_mb=${round(uncapped)} ratio=${round(capped / uncapped, 2)} capped_outcome=${outcomes.capped.replace(/ /g, '_')} uncapped_outcome=${outcomes.uncapped.replace(/ /g, '_')}`
);
