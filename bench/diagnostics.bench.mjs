// Write-time diagnostics latency (WDIAG-1), on real servers over the fixtures
// (server/test/fixtures/lsp/{py,ts}), one row per server, same server, same file, same run,
// alternating:
//   ours — the `edit` tool through the registry with the write hook: from the call to its
//          result carrying the one new diagnostic (sync before, write, didChange + didSave,
//          the server's diagnostics of that version — pulled from basedpyright, which
//          answers `textDocument/diagnostic`; awaited as a publish plus the quiet period
//          from typescript-language-server, which only pushes —, the journal fold);
//   raw  — the server's own latency: a didChange of the same kind of text straight on the
//          client, until its publishDiagnostics carrying the new error arrives.
// 15 rounds each after a warm-up. Prints p50s; the figure line's first two keys are
// basedpyright's. Needs server/dist (npm run build:ts).
import { cp, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { silentLogger } from '../server/dist/config/logger.js';
import { bundledServerBins } from '../server/dist/workspace/tool-bins.js';
import { DocumentSync } from '../server/dist/lsp/documents.js';
import { LspService } from '../server/dist/lsp/lsp-service.js';
import { WriteDiagnostics } from '../server/dist/lsp/write-diagnostics.js';
import { editTool } from '../server/dist/tools/index.js';
import { ToolRegistry } from '../server/dist/gate/registry.js';
import { machineLine, median, round } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 15);

const ROWS = [
  {
    name: 'basedpyright',
    fixture: 'py',
    file: 'pkg/util.py',
    language: 'python',
    anchor: 'return len(rows)',
    add: (tag) => ` + ${tag}`
  },
  {
    name: 'typescript',
    fixture: 'ts',
    file: 'src/greet.ts',
    language: 'typescript',
    anchor: 'return this.side * this.side',
    add: (tag) => ` + ${tag}`
  }
];

async function measure(row) {
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-bench-diag-')));
  await cp(path.join(here, '../server/test/fixtures/lsp', row.fixture), workspace, { recursive: true });
  const service = new LspService({
    workspace,
    env: process.env,
    logger: silentLogger,
    bundledBins: bundledServerBins(),
    tableFiles: []
  });
  const docs = new DocumentSync(service);
  const hook = new WriteDiagnostics(docs);
  const registry = new ToolRegistry([editTool], { writeHook: hook });
  const file = path.join(workspace, row.file);
  const uri = pathToFileURL(file).href;
  const ctx = { workspace, signal: new AbortController().signal, actor: 'model', chatId: 'bench' };

  // Warm-up: the server starts and analyses the root.
  const { client } = await service.serverFor(file);
  await docs.sync(row.file, file);
  await new Promise((r) => setTimeout(r, 3000));

  let previous = row.anchor;
  async function ours(i) {
    const next = `${row.anchor}${row.add(`ours_${i}`)}`;
    const started = performance.now();
    const r = await registry.call('edit', { path: row.file, old_string: previous, new_string: next }, ctx);
    const ms = performance.now() - started;
    previous = next;
    if (!r.ok || !r.output.includes(`ours_${i}`) || !r.output.includes('New diagnostics'))
      throw new Error(`${row.name} round ${i}: the new diagnostic is missing:\n${r.output}`);
    return ms;
  }

  async function raw(i) {
    const text = (await readFile(file, 'utf8')).replace(previous, `${row.anchor}${row.add(`raw_${i}`)}`);
    const seen = new Promise((resolve) => {
      const sub = client.onDiagnostics((p) => {
        if (p.uri === uri && p.diagnostics.some((d) => d.message.includes(`raw_${i}`))) {
          sub.dispose();
          resolve(performance.now());
        }
      });
    });
    const started = performance.now();
    await client.sync(uri, row.language, text);
    const ms = (await seen) - started;
    // Untimed: the server's copy back to the file's text (as after any write of ours), analysed,
    // so the next `ours` round starts from a server that agrees with the disk.
    const back = client.lastSequence;
    await client.sync(uri, row.language, await readFile(file, 'utf8'));
    await new Promise((resolve) => {
      const sub = client.onDiagnostics((p) => p.uri === uri && p.sequence > back && (sub.dispose(), resolve()));
    });
    return ms;
  }

  const o = [];
  const w = [];
  for (let i = 0; i < ROUNDS + 1; i++) {
    const a = await ours(i);
    const b = await raw(i);
    if (i > 0) {
      o.push(a);
      w.push(b);
    }
  }
  console.log(
    `${row.name} (${client.pullDiagnostics ? 'pull' : 'push + quiet period'}): rounds ${ROUNDS}; ours ms: ${o.map((x) => round(x, 0)).join(' ')}; raw ms: ${w.map((x) => round(x, 0)).join(' ')}`
  );
  hook.dispose();
  await service.dispose();
  await rm(workspace, { recursive: true, force: true });
  return { ours: median(o), raw: median(w) };
}

console.log(machineLine());
const r = {};
for (const row of ROWS) {
  r[row.name] = await measure(row);
  console.log(
    `  ${row.name}: write_to_new_ms_p50=${round(r[row.name].ours, 0)} raw_publish_ms_p50=${round(r[row.name].raw, 0)} ratio=${round(r[row.name].ours / r[row.name].raw, 2)}`
  );
}
const py = r.basedpyright;
const ts = r.typescript;
console.log(
  `diagnostics: write_to_new_ms_p50=${round(py.ours, 0)} raw_publish_ms_p50=${round(py.raw, 0)} ratio=${round(py.ours / py.raw, 2)} ts_write_to_new_ms_p50=${round(ts.ours, 0)} ts_raw_publish_ms_p50=${round(ts.raw, 0)} ts_ratio=${round(ts.ours / ts.raw, 2)}`
);
