/**
 * The tree-sitter grammars of the code graph (SPEC INTEL-2): each grammar package's own
 * `.wasm`, pinned exactly in `server/package.json`, loaded by `web-tree-sitter` (never
 * downloaded at run time). `grammars/check-abi.mjs` checks every one loads with an ABI the
 * runtime accepts and that Python's grammar is the one `@ast-grep/lang-python` carries for
 * structural search, so the two agree on what a call is.
 */
import { createRequire } from 'node:module';
import type { Language } from 'web-tree-sitter';
import type { StructuralLanguage } from '../languages.js';

/** Where a language's grammar comes from. */
export interface GrammarSource {
  /** npm package (exact version pinned in server/package.json). */
  package: string;
  /** The `.wasm` file inside it. */
  wasm: string;
}

/** The grammar of each language. */
export const GRAMMARS: Readonly<Record<StructuralLanguage, GrammarSource>> = {
  python: { package: 'tree-sitter-python', wasm: 'tree-sitter-python.wasm' },
  javascript: { package: 'tree-sitter-javascript', wasm: 'tree-sitter-javascript.wasm' },
  typescript: { package: 'tree-sitter-typescript', wasm: 'tree-sitter-typescript.wasm' },
  tsx: { package: 'tree-sitter-typescript', wasm: 'tree-sitter-tsx.wasm' }
};

/** The absolute path of a grammar's `.wasm`. */
export function grammarPath(language: StructuralLanguage): string {
  const require = createRequire(import.meta.url);
  const { package: pkg, wasm } = GRAMMARS[language];
  return require.resolve(`${pkg}/${wasm}`);
}

let init: Promise<void> | undefined;
const loaded = new Map<StructuralLanguage, Promise<Language>>();
let runtime: Promise<typeof import('web-tree-sitter')> | undefined;

/** `web-tree-sitter`, imported on the first graph query (the companion starts without it). */
export function webTreeSitter(): Promise<typeof import('web-tree-sitter')> {
  runtime ??= import('web-tree-sitter');
  return runtime;
}

/** The loaded grammar (the runtime is initialised once per process). */
export function loadGrammar(language: StructuralLanguage): Promise<Language> {
  let l = loaded.get(language);
  if (!l) {
    init ??= webTreeSitter().then(({ Parser }) => Parser.init());
    l = init.then(async () => (await webTreeSitter()).Language.load(grammarPath(language)));
    loaded.set(language, l);
  }
  return l;
}
