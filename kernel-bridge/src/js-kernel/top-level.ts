/**
 * Rewrites a notebook cell so that it can use top-level `await` while its declarations
 * persist in the kernel's `vm` context. Pure; parses with acorn (the parser Node's own
 * REPL uses for the same job, `lib/internal/repl/await.js`).
 *
 * The cell becomes
 *
 *   var a, f, C;(async function (__cellmate_g__) {            ← line 1 (lineOffset -1)
 *   <cell, with top-level declarations turned into assignments>
 *   })(globalThis)
 *
 * - top-level `let`/`const`/`var x = e`    → `void (x = e);` (destructuring kept:
 *   `void ({a, b} = o);`); `let x;` resets x to undefined, `var x;` keeps its value;
 * - `class C {…}`                          → `C = class C {…};`
 * - `function f(){}`                       → kept (hoisted inside the wrapper) and
 *   copied to the global at the start of the body: `__cellmate_g__.f = f;`
 * - `var` nested in top-level blocks/loops (not inside functions or classes) is hoisted
 *   too, as `var` would be in a script; block-scoped `let`/`const` in blocks stay.
 * - the last statement, if it is an expression, becomes `return (expr);` — its value is
 *   the cell's result (a returned thenable is awaited, as in Node's REPL).
 * All names are hoisted as global `var`s, so re-running `let a = 1` or `const a = 2`
 * works as a notebook user expects — and `const` is *not* enforced across or within cells.
 * Static `import … from` is not supported (scripts cannot have it): use
 * `await import('x')` or `require('x')`.
 */
import { parse, type Node } from 'acorn';

export interface ScopedCell {
  /** Code to compile with `lineOffset: -1`. */
  code: string;
  /** Names the cell declares at top level. */
  declared: string[];
  /** True when the last statement is an expression (the cell has a result). */
  hasResult: boolean;
}

export const GLOBAL_PARAM = '__cellmate_g__';

interface Edit {
  start: number;
  end: number;
  text: string;
}

// acorn's ESTree types are a wide union; this file reads a handful of fields by name.
type AnyNode = Node & Record<string, unknown>;

/** Parses as a script with top-level await allowed. Throws acorn's SyntaxError (`pos`, `loc`). */
export function parseCell(source: string): AnyNode {
  // Acorn's Program and acorn-walk's AnyNode describe the same ESTree node from two packages.
  return parse(source, {
    ecmaVersion: 'latest',
    sourceType: 'script',
    allowAwaitOutsideFunction: true,
    allowHashBang: true,
    locations: true
  }) as unknown as AnyNode;
}

/** Identifiers bound by a declaration pattern (`a`, `{a, b: [c]}`, `...rest`, `x = 1`). */
export function patternNames(p: AnyNode, out: string[] = []): string[] {
  switch (p.type) {
    case 'Identifier':
      out.push(p.name as string);
      break;
    case 'ObjectPattern':
      for (const prop of p.properties as AnyNode[]) {
        patternNames((prop.type === 'RestElement' ? prop.argument : prop.value) as AnyNode, out);
      }
      break;
    case 'ArrayPattern':
      for (const el of p.elements as (AnyNode | null)[]) if (el) patternNames(el, out);
      break;
    case 'RestElement':
      patternNames(p.argument as AnyNode, out);
      break;
    case 'AssignmentPattern':
      patternNames(p.left as AnyNode, out);
      break;
  }
  return out;
}

const FUNCTION_LIKE = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassDeclaration',
  'ClassExpression'
]);

/** `void (a = 1, {b} = o);` for a declaration; undefined-resets for bare let/const. */
function declarationAsExpression(source: string, decl: AnyNode): string | undefined {
  const parts: string[] = [];
  for (const d of decl.declarations as AnyNode[]) {
    const id = d.id as AnyNode;
    const init = d.init as AnyNode | null;
    const target = source.slice(id.start, id.end);
    if (init) parts.push(`(${target} = ${source.slice(init.start, init.end)})`);
    else if (decl.kind !== 'var') parts.push(`(${target} = void 0)`);
  }
  return parts.length ? `void (${parts.join(', ')})` : undefined;
}

/** Collects edits for `var` nested in top-level control flow (not crossing functions). */
function hoistNestedVars(source: string, node: AnyNode, names: string[], edits: Edit[], parentKey?: string): void {
  if (FUNCTION_LIKE.has(node.type)) return;
  if (node.type === 'VariableDeclaration' && node.kind === 'var') {
    for (const d of node.declarations as AnyNode[]) patternNames(d.id as AnyNode, names);
    if (parentKey === 'left') {
      // for (var x of xs) → for (x of xs)
      const id = (node.declarations as AnyNode[])[0]!.id as AnyNode;
      edits.push({ start: node.start, end: node.end, text: source.slice(id.start, id.end) });
    } else if (parentKey === 'init') {
      edits.push({ start: node.start, end: node.end, text: declarationAsExpression(source, node) ?? '' });
    } else {
      edits.push({ start: node.start, end: node.end, text: `${declarationAsExpression(source, node) ?? 'void 0'};` });
    }
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc') continue;
    const children = Array.isArray(value) ? value : [value];
    for (const c of children) {
      if (c && typeof c === 'object' && typeof (c as AnyNode).type === 'string') {
        hoistNestedVars(source, c as AnyNode, names, edits, key);
      }
    }
  }
}

function applyEdits(source: string, edits: Edit[]): string {
  // Insertions (empty ranges) go before a replacement that starts at the same offset.
  edits.sort((a, b) => a.start - b.start || a.end - a.start - (b.end - b.start));
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += source.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + source.slice(at);
}

/** Rewrites a cell (see the module comment). Throws acorn's SyntaxError on bad syntax. */
export function rewriteCell(source: string): ScopedCell {
  const program = parseCell(source);
  const body = program.body as AnyNode[];
  const names: string[] = [];
  const functionNames: string[] = [];
  const edits: Edit[] = [];
  let hasResult = false;

  body.forEach((stmt, i) => {
    switch (stmt.type) {
      case 'VariableDeclaration':
        for (const d of stmt.declarations as AnyNode[]) patternNames(d.id as AnyNode, names);
        edits.push({ start: stmt.start, end: stmt.end, text: `${declarationAsExpression(source, stmt) ?? 'void 0'};` });
        break;
      case 'FunctionDeclaration': {
        const name = (stmt.id as AnyNode).name as string;
        names.push(name);
        functionNames.push(name);
        break;
      }
      case 'ClassDeclaration': {
        const name = (stmt.id as AnyNode).name as string;
        names.push(name);
        edits.push({ start: stmt.start, end: stmt.start, text: `${name} = ` });
        edits.push({ start: stmt.end, end: stmt.end, text: ';' });
        break;
      }
      case 'ExpressionStatement':
        if (i === body.length - 1 && stmt.directive === undefined) {
          const e = stmt.expression as AnyNode;
          edits.push({ start: stmt.start, end: stmt.end, text: `return (${source.slice(e.start, e.end)});` });
          hasResult = true;
        }
        break;
      default:
        hoistNestedVars(source, stmt, names, edits);
    }
  });

  if (functionNames.length) {
    // After any directive prologue ('use strict' must stay first in the body).
    const firstNonDirective = body.find((s) => !(s.type === 'ExpressionStatement' && s.directive !== undefined));
    const at = firstNonDirective ? firstNonDirective.start : source.length;
    const text = functionNames.map((n) => `${GLOBAL_PARAM}.${n} = ${n};`).join(' ') + ' ';
    edits.push({ start: at, end: at, text });
  }

  const declared = [...new Set(names)];
  const hoist = declared.length ? `var ${declared.join(', ')};` : '';
  const code = `${hoist}(async function (${GLOBAL_PARAM}) {\n${applyEdits(source, edits)}\n})(globalThis)`;
  return { code, declared, hasResult };
}
