// Staged structural rewrite over many notebooks (SPEC EDIT-1/2): `ast_edit` stages one
// call-pattern rewrite across 1,000 generated notebooks (3 code cells each, with outputs
// and metadata), then `resolve accept` writes them all through the one all-or-nothing
// multi-file edit. Both through the real tool registry. Checks every notebook changed.
// Needs server/dist (npm run build:ts). Usage: npm run bench -- rewrite [notebooks=1000]
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { machineLine, round } from './lib.mjs';
import { builtinTools } from '../server/dist/tools/index.js';
import { ToolRegistry } from '../server/dist/gate/registry.js';
import { StagedEdits } from '../server/dist/structural/staged-edits.js';

const count = Number(process.argv[2] ?? 1000);
const ws = await mkdtemp(path.join(os.tmpdir(), 'cellmate-rewrite-bench-'));
const cell = (id, source, i) => ({
  cell_type: 'code',
  execution_count: i,
  id,
  metadata: { tags: ['bench'] },
  outputs: [{ name: 'stdout', output_type: 'stream', text: [`result ${id}\n`] }],
  source: source.split(/(?<=\n)/)
});
for (let n = 0; n < count; n++) {
  const nb = {
    cells: [
      cell(`a${n}`, `import net\nr = fetch("https://x/${n}", 3)\nprint(r)`, 1),
      cell(`b${n}`, `for u in urls:\n    data = fetch(u, ${n % 7})\n    keep(data)`, 2),
      { cell_type: 'markdown', id: `m${n}`, metadata: {}, source: ['fetch(not, code)'] },
      cell(`c${n}`, `%time total = fetch(base, 10)\n`, 3)
    ],
    metadata: {
      kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' },
      language_info: { name: 'python' }
    },
    nbformat: 4,
    nbformat_minor: 5
  };
  await writeFile(path.join(ws, `nb${String(n).padStart(4, '0')}.ipynb`), `${JSON.stringify(nb, null, 1)}\n`);
}
const registry = new ToolRegistry(builtinTools({ edits: new StagedEdits() }));
const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'bench' };
console.log(machineLine());
let t = performance.now();
const staged = await registry.call('ast_edit', { pattern: 'fetch($U, $T)', rewrite: 'fetch($U, timeout=$T)' }, ctx);
const stageMs = performance.now() - t;
if (!staged.ok) throw new Error(staged.output);
console.log(staged.output.split('\n')[0]);
const editId = /edit_[0-9a-f]+_\d+/.exec(staged.output)[0];
t = performance.now();
const applied = await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctx);
const applyMs = performance.now() - t;
if (!applied.ok) throw new Error(applied.output);
const sample = JSON.parse(await readFile(path.join(ws, `nb${String(count - 1).padStart(4, '0')}.ipynb`), 'utf8'));
if (!sample.cells[3].source.join('').includes('timeout=10') || sample.cells[2].source[0] !== 'fetch(not, code)')
  throw new Error('the last notebook was not rewritten as expected');
await rm(ws, { recursive: true, force: true });
console.log(`rewrite: stage_ms=${round(stageMs, 0)} apply_ms=${round(applyMs, 0)} notebooks=${count}`);
