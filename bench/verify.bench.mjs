// verify: notebook_verify against the standard headless runner, `jupyter nbconvert --execute`
// (nbclient), on the same generated notebooks, interleaved.
//
//   npm run bench -- verify [NOTEBOOKS=50] [ROUNDS=2]
//
// The notebooks (numpy, pandas and matplotlib cells; every 7th raises a KeyError; every 5th
// has a stored output edited so it differs) are generated here, deterministically. Their
// stored outputs come from one nbconvert run in place (the warm-up of both sides).
// ours:     the notebook_verify tool through a registry (fresh ipykernel per notebook, its
//           default parallelism, continue_on_error so every cell gets a verdict).
// nbclient: one `jupyter nbconvert --execute --allow-errors --to notebook` over all the
//           notebooks (one process, one kernel per notebook, one after another) — the
//           strongest form of the baseline. With VERIFY_LOOP=1 also `loop_s`: one nbconvert
//           process per notebook, as CI scripts usually run it.
// agree:    code cells whose ok/error verdict (an `error` output or not) is the same in both.
//
// Last line: verify: notebooks=<n> ours_s=<median> nbclient_s=<median> ratio=<ours/nbclient> agree=<a>/<cells> changed=<n> errors=<n> [loop_s=<n>]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineLine, median, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, '.venv', 'bin');
const python = path.join(bin, 'python');
const srv = path.join(repo, 'server', 'dist');
for (const f of [
  python,
  path.join(bin, 'jupyter-nbconvert'),
  path.join(srv, 'tools', 'notebook_verify', 'notebook_verify.js')
]) {
  if (!fs.existsSync(f)) {
    console.error(`${f} is missing: run scripts/setup first`);
    process.exit(1);
  }
}
const N = Number(process.argv[2] ?? 50);
const ROUNDS = Number(process.argv[3] ?? 2);
const { KernelManager } = await import(pathToFileURL(path.join(srv, 'kernels', 'kernel-manager.js')).href);
const { createNotebookVerifyTool } = await import(
  pathToFileURL(path.join(srv, 'tools', 'notebook_verify', 'notebook_verify.js')).href
);
const { ToolRegistry } = await import(pathToFileURL(path.join(srv, 'gate', 'registry.js')).href);

const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-verify-')));
const nbDir = path.join(workspace, 'nbs');
fs.mkdirSync(nbDir);
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };

const cell = (source) => ({
  cell_type: 'code',
  execution_count: null,
  id: `c${Math.random().toString(16).slice(2, 10)}`,
  metadata: {},
  outputs: [],
  source
});
function notebook(i) {
  const cells = [
    cell('import numpy as np\nimport pandas as pd'),
    cell(`rng = np.random.default_rng(${i})\ndata = rng.normal(size=(${20 + i}, 3))\ndata.mean(axis=0).round(6)`),
    cell('df = pd.DataFrame(data, columns=list("abc"))\ndf.describe().round(3)')
  ];
  if (i % 3 === 0) cells.push(cell('import matplotlib.pyplot as plt\nplt.plot(df["a"].cumsum())\nplt.show()'));
  if (i % 7 === 3) cells.push(cell('df["missing"].sum()'));
  cells.push(cell('print(len(df), round(float(df["b"].sum()), 4))'));
  cells.forEach((c, k) => (c.id = `n${i}c${k}`));
  return {
    cells,
    metadata: {
      kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' },
      language_info: { name: 'python' }
    },
    nbformat: 4,
    nbformat_minor: 5
  };
}
const names = Array.from({ length: N }, (_, i) => `nb${String(i).padStart(3, '0')}.ipynb`);
names.forEach((name, i) => fs.writeFileSync(path.join(nbDir, name), JSON.stringify(notebook(i), null, 1)));

const nbconvert = (files, outDir) => {
  const r = spawnSync(
    path.join(bin, 'jupyter-nbconvert'),
    [
      '--execute',
      '--allow-errors',
      '--to',
      'notebook',
      ...(outDir ? ['--output-dir', outDir] : ['--inplace']),
      ...files
    ],
    { cwd: nbDir, env, encoding: 'utf8' }
  );
  if (r.status !== 0) throw new Error(`nbconvert failed: ${r.stderr.slice(-2000)}`);
};

// Warm-up and stored outputs: one nbconvert run in place; then every 5th notebook's last output edited.
nbconvert(names);
let tampered = 0;
names.forEach((name, i) => {
  if (i % 5 !== 1) return;
  const file = path.join(nbDir, name);
  const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
  const last = nb.cells.at(-1).outputs.find((o) => o.output_type === 'stream');
  last.text = ['0 0.0\n'];
  fs.writeFileSync(file, JSON.stringify(nb, null, 1));
  tampered++;
});

const manager = new KernelManager({
  workspace,
  pythonArgv: [python, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
});
const registry = new ToolRegistry([]);
registry.register(createNotebookVerifyTool({ kernels: manager }));
const ctx = { workspace, signal: new AbortController().signal, actor: 'model', chatId: 'bench' };

const ours = async () => {
  const t = performance.now();
  const r = await registry.call('notebook_verify', { folder: 'nbs', continue_on_error: true }, ctx);
  if (!r.ok) throw new Error(r.output);
  return { s: (performance.now() - t) / 1000, notebooks: r.metadata.notebooks };
};
const theirs = () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-nbclient-'));
  const t = performance.now();
  nbconvert(names, out);
  const s = (performance.now() - t) / 1000;
  return { s, out };
};
const loop = () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-nbloop-'));
  const t = performance.now();
  for (const name of names) nbconvert([name], out);
  return (performance.now() - t) / 1000;
};

console.log(execFileSync('uptime', { encoding: 'utf8' }).trim());
const oursS = [];
const theirsS = [];
let last;
let lastOut;
for (let r = 0; r < ROUNDS; r++) {
  const a = r % 2 === 0;
  if (a) {
    last = await ours();
    oursS.push(last.s);
  }
  const t = theirs();
  theirsS.push(t.s);
  lastOut = t.out;
  if (!a) {
    last = await ours();
    oursS.push(last.s);
  }
  console.log(`round ${r + 1}: ours ${round(last.s)} s, nbclient ${round(t.s)} s`);
}
const loopS = process.env.VERIFY_LOOP === '1' ? loop() : undefined;
if (loopS !== undefined) console.log(`loop (one nbconvert process per notebook): ${round(loopS)} s`);

// Agreement: every code cell's ok/error verdict, ours against nbclient's executed copy.
let cells = 0;
let agree = 0;
const disagreements = [];
for (const v of last.notebooks) {
  const theirsNb = JSON.parse(fs.readFileSync(path.join(lastOut, path.basename(v.path)), 'utf8'));
  for (const c of v.cells) {
    cells++;
    const tc = theirsNb.cells[c.index];
    const theirsError = (tc.outputs ?? []).some((o) => o.output_type === 'error');
    const oursError = c.status === 'error';
    if (theirsError === oursError && c.status !== 'not-run') agree++;
    else
      disagreements.push(`${v.path} cell ${c.index + 1}: ours ${c.status}, nbclient ${theirsError ? 'error' : 'ok'}`);
  }
}
for (const d of disagreements.slice(0, 10)) console.log(`disagree: ${d}`);
const changed = last.notebooks.filter((n) => n.status === 'changed').length;
const errors = last.notebooks.filter((n) => n.status === 'error').length;
await manager.dispose();
fs.rmSync(workspace, { recursive: true, force: true });
console.log(machineLine());
console.log(
  `ours s: ${oursS.map((x) => round(x)).join(' ')}\nnbclient s: ${theirsS.map((x) => round(x)).join(' ')} (tampered stored outputs: ${tampered})`
);
const o = median(oursS);
const b = median(theirsS);
console.log(
  `verify: notebooks=${N} ours_s=${round(o)} nbclient_s=${round(b)} ratio=${round(o / b, 2)} agree=${agree}/${cells} changed=${changed} errors=${errors}${loopS !== undefined ? ` loop_s=${round(loopS)}` : ''}`
);
