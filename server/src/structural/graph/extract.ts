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

/** The module-level pseudo-symbol calls at top level belong to. */
export const MODULE = '<module>';

const PY_DEFS: Record<string, GraphSymbol['kind']> = { function_definition: 'function', class_definition: 'class' };
const JS_DEFS: Record<string, GraphSymbol['kind']> = {
  function_declaration: 'function', generator_function_declaration: 'function', class_declaration: 'class',
  method_definition: 'method', abstract_class_declaration: 'class'
};

/** Extracts symbols and calls from a parsed document. */
export function extract(tree: Tree, language: StructuralLanguage): { symbols: GraphSymbol[]; calls: CallSite[] } {
  const symbols: GraphSymbol[] = [];
  const calls: CallSite[] = [];
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
    const callee = calleeName(node, python);
    if (callee) calls.push({ callee, caller: scope.length ? scope.join('.') : MODULE, line: node.startPosition.row + 1 });
    for (const child of node.namedChildren) if (child) visit(child, childScope, childEnclosing);
  };
  visit(tree.rootNode, [], undefined);
  return { symbols, calls };
}

/** `const f = () => …` / `const f = function …` define `f`. */
function jsFunctionBinding(node: Node, python: boolean): GraphSymbol['kind'] | undefined {
  if (python || node.type !== 'variable_declarator') return undefined;
  const value = node.childForFieldName('value');
  return value && (value.type === 'arrow_function' || value.type === 'function_expression' || value.type === 'function') ? 'function' : undefined;
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
