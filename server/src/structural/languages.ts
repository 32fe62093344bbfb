/**
 * Which languages structural search parses, how a path or a `language` argument names one,
 * and the name ast-grep's napi knows it by (JavaScript, TypeScript and TSX are built in;
 * Python comes from the one dynamic registration in `ast-languages.ts`).
 */
import path from 'node:path';
import { astGrep, astGrepLanguage } from './ast-languages.js';

/** A language `ast_grep` / `ast_edit` / `code_graph` understand. */
export type StructuralLanguage = 'python' | 'javascript' | 'typescript' | 'tsx';

/** Every language, in the order a mixed folder is searched. */
export const STRUCTURAL_LANGUAGES: readonly StructuralLanguage[] = ['python', 'typescript', 'tsx', 'javascript'];

const BY_EXTENSION: Record<string, StructuralLanguage> = {
  '.py': 'python',
  '.pyi': 'python',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx'
};

const ALIASES: Record<string, StructuralLanguage> = {
  python: 'python',
  py: 'python',
  javascript: 'javascript',
  js: 'javascript',
  jsx: 'javascript',
  typescript: 'typescript',
  ts: 'typescript',
  tsx: 'tsx'
};

/** The language of a source file by its extension (`.ipynb` is handled per notebook). */
export function languageOfPath(file: string): StructuralLanguage | undefined {
  return BY_EXTENSION[path.extname(file).toLowerCase()];
}

/** A `language` argument as the user wrote it (`py`, `TypeScript`…), or undefined if unknown. */
export function parseLanguageName(name: string): StructuralLanguage | undefined {
  return ALIASES[name.trim().toLowerCase()];
}

/** The language names accepted, for error messages. */
export const LANGUAGE_NAMES = 'python (py), typescript (ts), tsx, javascript (js)';

/**
 * A notebook's language from its metadata (`language_info.name`, else the kernelspec's
 * `language`); Jupyter's default when neither is set is Python.
 */
export function notebookLanguage(metadata: Record<string, unknown>): StructuralLanguage | undefined {
  const info = metadata.language_info as { name?: unknown } | undefined;
  const spec = metadata.kernelspec as { language?: unknown } | undefined;
  const name =
    typeof info?.name === 'string' ? info.name : typeof spec?.language === 'string' ? spec.language : 'python';
  return parseLanguageName(name);
}

/** The name `parse(…)` / `findAll` take for a language. */
export function napiLanguage(language: StructuralLanguage): string {
  switch (language) {
    case 'python':
      return astGrepLanguage('python');
    case 'javascript':
      return astGrep().Lang.JavaScript;
    case 'typescript':
      return astGrep().Lang.TypeScript;
    case 'tsx':
      return astGrep().Lang.Tsx;
  }
}

/**
 * The character ast-grep substitutes for `$` before parsing a pattern in this language
 * (a Python identifier cannot contain `$`; `@ast-grep/lang-python` declares `µ`).
 */
export function expandoChar(language: StructuralLanguage): string {
  return language === 'python' ? 'µ' : '$';
}
