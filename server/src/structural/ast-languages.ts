/**
 * The one registration of ast-grep's dynamic languages (tree-sitter grammars shipped as
 * prebuilt `parser.so` in npm packages). `registerDynamicLanguage` takes effect once per
 * process — a second call is ignored — so every language Cellmate parses with ast-grep is
 * registered here, together, and callers use {@link astGrepLanguage}.
 *
 * The native module itself is loaded here too, on first use ({@link astGrep}): the
 * companion answers its first requests without it, and the first
 * shell-policy check or eval scan pays the load once.
 */
import { createRequire } from 'node:module';

/** The `@ast-grep/napi` module. */
export type AstGrepNapi = typeof import('@ast-grep/napi');

/** The dynamic languages registered here. */
export type DynamicLanguageName = 'bash' | 'python';

interface LanguagePackage {
  libraryPath: string;
  extensions: string[];
  languageSymbol?: string;
  expandoChar?: string;
}

const require = createRequire(import.meta.url);
let napi: AstGrepNapi | undefined;
let registered = false;

/** `@ast-grep/napi`, loaded on first use (synchronously: it is a CommonJS native addon). */
export function astGrep(): AstGrepNapi {
  napi ??= require('@ast-grep/napi') as AstGrepNapi;
  return napi;
}

/**
 * A dynamic language's package as ast-grep loads it: the grammar's prebuilt library, its
 * extensions, symbol and expando character (the ast-grep CLI, `sg-cli.ts`, loads the same
 * library). Throws when the package has no prebuild for this platform.
 */
export function dynamicLanguagePackage(name: DynamicLanguageName): Required<LanguagePackage> {
  const pkg = require(`@ast-grep/lang-${name}`) as LanguagePackage;
  return {
    libraryPath: pkg.libraryPath,
    extensions: pkg.extensions,
    languageSymbol: pkg.languageSymbol ?? `tree_sitter_${name}`,
    expandoChar: pkg.expandoChar ?? '$'
  };
}

/** Registers every dynamic language (idempotent) and returns `name` for `parse(name, …)`. */
export function astGrepLanguage(name: DynamicLanguageName): DynamicLanguageName {
  if (!registered) {
    astGrep().registerDynamicLanguage({
      bash: dynamicLanguagePackage('bash'),
      python: dynamicLanguagePackage('python')
    });
    registered = true;
  }
  return name;
}
