// Structural search speed (SPEC AST-3): `ast_grep` (through the real tool registry) against
// the `sg` CLI of @ast-grep/cli (exact-pinned devDependency; the same engine) on the same
// pattern over the same corpus: the project venv's site-packages (≥ 5,000 .py files), used
// as the workspace itself so neither tool skips it (sg is told to ignore the .gitignore of the
// repository around it, as the workspace root has no parent for ast_grep). Runs are interleaved (ours, sg, ours,
// sg …); the medians are compared. Both must report the same number of matches.
// Needs server/dist (npm run build:ts) and scripts/setup's .venv.
// Usage: npm run bench -- structural [rounds=5] [pattern]
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, median, round } from './lib.mjs';
import { astGrepTool } from '../server/dist/tools/ast_grep/ast_grep.js';
import { ToolRegistry } from '../server/dist/gate/registry.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 5);
const pattern = process.argv[3] ?? 'isinstance($X, $T)';
const lib = path.join(repo, '.venv', 'lib');
const corpus = path.join(
  lib,
  readdirSync(lib).find((d) => d.startsWith('python')),
  'site-packages'
);
const sg = ['ast-grep', 'sg']
  .map((b) => path.join(repo, 'node_modules', '@ast-grep', 'cli', b))
  .find((b) => spawnSync(b, ['--version']).status === 0);
if (!sg) throw new Error('the @ast-grep/cli binary does not run: npm ci at the repo root');

let files = 0;
const count = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && e.name !== '__pycache__') count(path.join(dir, e.name));
    else if (e.isFile() && /\.pyi?$/.test(e.name)) files++; // both tools parse .py and .pyi
  }
};
count(corpus);
if (files < 5000) throw new Error(`corpus has ${files} Python files, fewer than 5,000`);

// The tool's own 2-minute budget is for a model's call; the bench measures throughput only.
const registry = new ToolRegistry([{ ...astGrepTool, timeoutMs: 3_600_000 }]);
const ours = async () => {
  const t = performance.now();
  const r = await registry.call(
    'ast_grep',
    { pattern, language: 'python', max_results: 1 },
    { workspace: corpus, signal: new AbortController().signal, actor: 'model', chatId: 'bench' }
  );
  const ms = performance.now() - t;
  if (!r.ok) throw new Error(r.output);
  if (r.metadata?.stoppedAt)
    throw new Error(
      `ast_grep stops at ${r.metadata.stoppedAt} matches (MAX_SEARCH_MATCHES): pick a pattern with fewer to compare with sg`
    );
  return { ms, matches: Number(/of (\d+) in/.exec(r.output)?.[1] ?? /\((\d+) match/.exec(r.output)?.[1] ?? 0) };
};
const theirs = () => {
  const t = performance.now();
  const out = execFileSync(
    sg,
    ['run', '--pattern', pattern, '--lang', 'python', '--json=stream', '--no-ignore', 'parent', '.'],
    { cwd: corpus, maxBuffer: 1 << 30 }
  );
  const ms = performance.now() - t;
  return { ms, matches: out.toString('utf8').split('\n').filter(Boolean).length };
};

console.log(machineLine());
console.log(
  `corpus: ${corpus} (${files} .py/.pyi files); pattern ${JSON.stringify(pattern)}; sg: ${execFileSync(sg, ['--version']).toString().trim()}`
);
await ours(); // warm: file cache and the parser
theirs();
const a = [];
const b = [];
for (let i = 0; i < rounds; i++) {
  const o = await ours();
  const s = theirs();
  if (o.matches !== s.matches) throw new Error(`match counts differ: ast_grep ${o.matches}, sg ${s.matches}`);
  a.push(o.ms);
  b.push(s.ms);
  console.log(`round ${i + 1}: ours ${round(o.ms)} ms, sg ${round(s.ms)} ms, ${o.matches} matches`);
}
const oursMs = median(a);
const sgMs = median(b);
console.log(
  `structural: ours_ms=${round(oursMs, 0)} sg_ms=${round(sgMs, 0)} ratio=${round(oursMs / sgMs, 2)} files=${files}`
);
