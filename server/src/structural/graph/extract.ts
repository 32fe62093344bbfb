/**
 * Symbols and call sites of one document (a file, or a notebook cell with its magics
 * neutralised) from a tree-sitter parse: functions, classes and methods with their
 * qualified names; every call with the name it calls (the identifier, or the property of
 * `a.b()`) and the symbol it sits in (`<module>` at top level). What a call is matches
 * structural search: Python `call`, JavaScript/TypeScript `call_expression` and
 * `new_expression` (INTEL-2).
 */
import type { Node, Tree } from 'web-tree-sitter';
import type { StructuralLanguage } from '../languages.js';

/** A definition. */
export interface GraphSymbol {
  /** `name`, or `Class.method`. */
  qualified: string;
  name: string;
  kind: 'function' | 'class' | 'method';
  /** 1-based. */
  line: number;
}

/** A call. */
export interface CallSite {
  callee: string;
  /** The qualified name of the enclosing symbol, or `<module>`. */
  caller: string;
  line: number;
}

/**
 * An import: the module as written (`pkg.mod`, `./util`), Python's leading dots as
 * `level` (`from ..a import b` → module `a`, level 2), and the names taken from it
 * (`from pkg import mod` may import the submodule `pkg.mod`).
 */
export interface ImportSite {
  module: string;
  level: number;
  names: string[];
  line: number;
}

/** The module-level pseudo-symbol calls at top level belong to. */
export const MODULE = '<module>';

const PY_DEFS: Record<string, GraphSymbol['kind']> = { function_definition: 'function', class_definition: 'class' };
const JS_DEFS: Record<string, GraphSymbol['kind']> = {
  function_declaration: 'function',
  generator_function_declaration: 'function',
  class_declaration: 'class',
  method_definition: 'method',
  abstract_class_declaration: 'class'
};

/** Extracts symbols and calls from a parsed document. */
export function extract(
  tree: Tree,
  language: StructuralLanguage
): { symbols: GraphSymbol[]; calls: CallSite[]; imports: ImportSite[] } {
  const symbols: GraphSymbol[] = [];
  const calls: CallSite[] = [];
  const imports: ImportSite[] = [];
  const python = language === 'python';
  const defs = python ? PY_DEFS : JS_DEFS;
  /** `enclosing`: the kind of the nearest definition around `node` (a function in a class is a method). */
  const visit = (node: Node, scope: string[], enclosing: 'class' | 'function' | undefined): void => {
    let childScope = scope;
    let childEnclosing = enclosing;
    const kind = defs[node.type] ?? jsFunctionBinding(node, python);
    const name = kind ? node.childForFieldName('name')?.text : undefined;
    if (kind && name) {
      const k: GraphSymbol['kind'] = kind === 'function' && enclosing === 'class' ? 'method' : kind;
      symbols.push({ qualified: [...scope, name].join('.'), name, kind: k, line: node.startPosition.row + 1 });
      childScope = [...scope, name];
      childEnclosing = k === 'class' ? 'class' : 'function';
    }
    const imported = python ? pythonImport(node) : jsImport(node);
    if (imported) imports.push(...imported);
    const callee = calleeName(node, python);
    if (callee)
      calls.push({ callee, caller: scope.length ? scope.join('.') : MODULE, line: node.startPosition.row + 1 });
    for (const child of node.namedChildren) if (child) visit(child, childScope, childEnclosing);
  };
  visit(tree.rootNode, [], undefined);
  return { symbols, calls, imports };
}

/** `import a.b as c, d` / `from ..a import b, c` (tree-sitter-python node types). */
function pythonImport(node: Node): ImportSite[] | undefined {
  const line = node.startPosition.row + 1;
  if (node.type === 'import_statement') {
    return node.namedChildren.flatMap((c) => {
      const name =
        c?.type === 'aliased_import' ? c.childForFieldName('name') : c?.type === 'dotted_name' ? c : undefined;
      return name ? [{ module: name.text, level: 0, names: [], line }] : [];
    });
  }
  if (node.type !== 'import_from_statement') return undefined;
  const from = node.childForFieldName('module_name');
  if (!from) return undefined;
  let module = from.text;
  let level = 0;
  if (from.type === 'relative_import') {
    level = /^\.*/.exec(from.text)![0].length;
    module = from.text.slice(level);
  }
  const names = node.childrenForFieldName('name').flatMap((n) => {
    const name = n?.type === 'aliased_import' ? n.childForFieldName('name') : n;
    return name ? [name.text] : [];
  });
  return [{ module, level, names, line }];
}

/** `import … from 'x'`, `export … from 'x'`, `require('x')`, `import('x')`. */
function jsImport(node: Node): ImportSite[] | undefined {
  const line = node.startPosition.row + 1;
  if (node.type === 'import_statement' || node.type === 'export_statement') {
    const source = node.childForFieldName('source');
    return source ? [{ module: stringValue(source), level: 0, names: [], line }] : undefined;
  }
  if (node.type === 'call_expression') {
    const fn = node.childForFieldName('function');
    if (!fn || (fn.text !== 'require' && fn.type !== 'import')) return undefined;
    const arg = node.childForFieldName('arguments')?.namedChildren[0];
    return arg && arg.type === 'string' ? [{ module: stringValue(arg), level: 0, names: [], line }] : undefined;
  }
  return undefined;
}

const stringValue = (n: Node): string => n.text.replace(/^['"`]|['"`]$/g, '');

/** `const f = () => …` / `const f = function …` define `f`. */
function jsFunctionBinding(node: Node, python: boolean): GraphSymbol['kind'] | undefined {
  if (python || node.type !== 'variable_declarator') return undefined;
  const value = node.childForFieldName('value');
  return value && (value.type === 'arrow_function' || value.type === 'function_expression' || value.type === 'function')
    ? 'function'
    : undefined;
}

function calleeName(node: Node, python: boolean): string | undefined {
  const isCall = python ? node.type === 'call' : node.type === 'call_expression' || node.type === 'new_expression';
  if (!isCall) return undefined;
  const fn = node.childForFieldName(python ? 'function' : node.type === 'new_expression' ? 'constructor' : 'function');
  if (!fn) return undefined;
  if (fn.type === 'identifier') return fn.text;
  if (fn.type === 'attribute') return fn.childForFieldName('attribute')?.text;
  if (fn.type === 'member_expression') return fn.childForFieldName('property')?.text;
  return undefined;
}
