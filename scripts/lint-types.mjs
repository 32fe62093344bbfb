#!/usr/bin/env node
/**
 * Type-honesty lint: fails on an explicit `any` and on a double cast (`as unknown as T`,
 * `<T><unknown>x`) unless a comment on the line above says why. Both switch the compiler's
 * checks off where they matter most — at the edges, where data from another program
 * arrives — so each one has to carry its reason where a reviewer reads it.
 *
 * It parses with the TypeScript compiler API (already a dependency; no type-check, so
 * the whole repository takes about a second) instead of typescript-eslint, whose rules would
 * still need a custom one for "a comment on the line above".
 *
 *   node scripts/lint-types.mjs            lint the repository's roots
 *   node scripts/lint-types.mjs FILE...    lint these files only (the lint's own test)
 * Exit code 1 with one `file:line: problem` per finding; 0 when clean.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where `any` is refused. */
const ANY_ROOTS = [
  'server/src',
  'protocol/src',
  'lab-extension/src',
  'kernel-bridge/src',
  'scripts',
  'test',
  'server/test',
  'protocol/test',
  'lab-extension/test',
  'kernel-bridge/test',
  'bench'
];
/**
 * Where an unexplained double cast is refused. Tests are left out: their fakes stand in
 * for real interfaces on purpose, and the cast is the honest way to say so.
 */
const CAST_ROOTS = ['server/src', 'protocol/src', 'lab-extension/src', 'kernel-bridge/src'];

const SOURCE = /\.(ts|mts|cts|tsx)$/;
const SKIP_DIRS = new Set(['node_modules', 'lib', 'dist', '.venv', 'fixtures', 'labextension']);

/** The problems in one file's text; `path` is repository-relative with forward slashes. */
export function lintSource(path, text, { any = true, casts = true } = {}) {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const lines = text.split(/\r?\n/);
  const problems = [];
  const lineOf = (node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line;
  const explained = (line) => commentEndsAt(lines, line - 1);
  // The formatter may wrap a statement so the cast starts a line of its own: a comment above
  // any line the enclosing statement starts, up to the statement itself, explains it.
  const explainedAbove = (node) => {
    for (let n = node; n && n !== file; n = n.parent) {
      if (explained(lineOf(n))) return true;
      if (ts.isStatement(n) || ts.isClassElement(n)) return false;
    }
    return false;
  };
  const visit = (node) => {
    if (any && node.kind === ts.SyntaxKind.AnyKeyword && !explainedAbove(node)) {
      problems.push({ line: lineOf(node) + 1, message: 'explicit `any`: type it, or say why on the line above' });
    }
    // A cast spanning lines may be explained above where it starts or above its `as unknown`.
    const cast = casts ? doubleCastOf(node) : undefined;
    if (cast && !explainedAbove(node) && !explained(lineOf(cast.type))) {
      problems.push({
        line: lineOf(node) + 1,
        message: '`as unknown as` without a comment on the line above saying why'
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return problems;
}

/** For `x as unknown as T` or `<T><unknown>x` (a cast through `unknown`), its inner cast. */
function doubleCastOf(node) {
  if (!ts.isAsExpression(node) && !ts.isTypeAssertionExpression(node)) return undefined;
  let inner = node.expression;
  while (ts.isParenthesizedExpression(inner)) inner = inner.expression;
  const isCast = ts.isAsExpression(inner) || ts.isTypeAssertionExpression(inner);
  return isCast && inner.type.kind === ts.SyntaxKind.UnknownKeyword ? inner : undefined;
}

/** True when line `index` (0-based) is a comment line: `// …`, or the last line of a block comment. */
function commentEndsAt(lines, index) {
  if (index < 0) return false;
  const line = lines[index].trim();
  return line.startsWith('//') || line.endsWith('*/');
}

function* walk(dir) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) yield full;
  }
}

function main(argv) {
  const under = (rel, roots) => roots.some((root) => rel === root || rel.startsWith(`${root}/`));
  const files =
    argv.length > 0
      ? argv.map((f) => resolve(f))
      : [...new Set(ANY_ROOTS.flatMap((root) => [...walk(join(repo, root))]))];
  let count = 0;
  for (const full of files) {
    const rel = relative(repo, full).split('\\').join('/');
    // Files named on the command line get every rule; the roots get the rules that apply there.
    const rules = argv.length > 0 ? {} : { any: under(rel, ANY_ROOTS), casts: under(rel, CAST_ROOTS) };
    for (const p of lintSource(rel, readFileSync(full, 'utf8'), rules)) {
      console.error(`${rel}:${p.line}: ${p.message}`);
      count++;
    }
  }
  if (count > 0) {
    console.error(`lint-types: ${count} problem${count === 1 ? '' : 's'} in ${files.length} files`);
    return 1;
  }
  console.log(`lint-types: ${files.length} files, no unexplained any or double casts`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
