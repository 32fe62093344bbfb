/**
 * The one registration of ast-grep's dynamic languages (tree-sitter grammars shipped as
 * prebuilt `parser.so` in npm packages). `registerDynamicLanguage` takes effect once per
 * process — a second call is ignored — so every language Cellmate parses with ast-grep is
 * registered here, together, and callers use {@link astGrepLanguage}.
 */
import { createRequire } from 'node:module';
import { registerDynamicLanguage } from '@ast-grep/napi';

/** The dynamic languages registered here. */
export type DynamicLanguageName = 'bash' | 'python';

interface LanguagePackage {
  libraryPath: string;
  extensions: string[];
  languageSymbol?: string;
  expandoChar?: string;
}

let registered = false;

/** Registers every dynamic language (idempotent) and returns `name` for `parse(name, …)`. */
export function astGrepLanguage(name: DynamicLanguageName): DynamicLanguageName {
  if (!registered) {
    const require = createRequire(import.meta.url);
    const load = (pkg: string): LanguagePackage => require(pkg) as LanguagePackage;
    const bash = load('@ast-grep/lang-bash');
    const python = load('@ast-grep/lang-python');
    registerDynamicLanguage({
      bash: { libraryPath: bash.libraryPath, extensions: bash.extensions, languageSymbol: bash.languageSymbol ?? 'tree_sitter_bash', expandoChar: bash.expandoChar ?? '$' },
      python: { libraryPath: python.libraryPath, extensions: python.extensions, languageSymbol: python.languageSymbol ?? 'tree_sitter_python', expandoChar: python.expandoChar ?? '$' }
    });
    registered = true;
  }
  return name;
}
