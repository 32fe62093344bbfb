#!/usr/bin/env node
/**
 * Checks the code graph's tree-sitter grammars (SPEC INTEL-2), read from the one table in
 * server/src/structural/graph/grammars.ts (built to server/dist):
 *  1. each grammar package is installed at exactly the version server/package.json pins;
 *  2. each package's own .wasm loads in the pinned web-tree-sitter runtime, with an ABI
 *     between the runtime's MIN_COMPATIBLE_VERSION and LANGUAGE_VERSION;
 *  3. Python's grammar is the one structural search parses with: tree-sitter-python's
 *     src/grammar.json is byte-identical to @ast-grep/lang-python's (which ast-grep's napi
 *     loads natively), so both agree on what a call is.
 * Exit code 1 with one line per problem. Run: `node grammars/check-abi.mjs` (after a build).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'server', 'package.json'));
const { GRAMMARS, grammarPath } = await import(path.join(root, 'server/dist/structural/graph/grammars.js'));
const wts = await import('web-tree-sitter'); // the ESM build, the one grammars.ts loads
const { Parser, Language } = wts;
const pins = JSON.parse(readFileSync(path.join(root, 'server/package.json'), 'utf8')).dependencies;
/** The installed package's folder (some packages do not export ./package.json). */
const dir = (pkg) => {
  for (let d = path.dirname(require.resolve(pkg)); d !== path.dirname(d); d = path.dirname(d)) {
    try {
      if (JSON.parse(readFileSync(path.join(d, 'package.json'), 'utf8')).name === pkg) return d;
    } catch {}
  }
  throw new Error(`${pkg} is not installed`);
};
const version = (pkg) => JSON.parse(readFileSync(path.join(dir(pkg), 'package.json'), 'utf8')).version;

const problems = [];
await Parser.init();
// Live bindings: set by init().
const { LANGUAGE_VERSION, MIN_COMPATIBLE_VERSION } = wts;
console.log(
  `web-tree-sitter ${version('web-tree-sitter')} (pinned ${pins['web-tree-sitter']}): ABI ${MIN_COMPATIBLE_VERSION}–${LANGUAGE_VERSION}`
);
for (const [language, source] of Object.entries(GRAMMARS)) {
  const installed = version(source.package);
  if (pins[source.package] !== installed)
    problems.push(
      `${source.package}: installed ${installed}, server/package.json pins ${pins[source.package] ?? 'nothing'}`
    );
  try {
    const grammar = await Language.load(grammarPath(language));
    const abi = grammar.abiVersion;
    const ok = abi >= MIN_COMPATIBLE_VERSION && abi <= LANGUAGE_VERSION;
    if (!ok)
      problems.push(
        `${language}: ${source.wasm} has ABI ${abi}, outside ${MIN_COMPATIBLE_VERSION}–${LANGUAGE_VERSION}`
      );
    console.log(`${language}: ${source.package}@${installed} ${source.wasm} ABI ${abi} ${ok ? 'ok' : 'INCOMPATIBLE'}`);
  } catch (error) {
    problems.push(`${language}: ${source.wasm} does not load (${error.message})`);
  }
}
const astGrep = readFileSync(path.join(dir('@ast-grep/lang-python'), 'src/grammar.json'));
const graph = readFileSync(path.join(dir('tree-sitter-python'), 'src/grammar.json'));
if (astGrep.equals(graph))
  console.log(`python: same grammar as structural search (@ast-grep/lang-python@${version('@ast-grep/lang-python')})`);
else
  problems.push(
    'python: tree-sitter-python and @ast-grep/lang-python carry different grammars (pin tree-sitter-python to the version @ast-grep/lang-python was built from)'
  );
for (const p of problems) console.error(`grammar problem: ${p}`);
process.exit(problems.length ? 1 : 0);
