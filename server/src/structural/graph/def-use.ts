/**
 * Which top-level names a notebook's Python cells bind, change and read, from tree-sitter
 * parses (magics neutralised, positions kept), and from there the cells a failing line's
 * names come from: the walk a person does by hand when cell 5 fails because cell 2 built
 * the wrong column. Names only, no types or flow: `df["x"] = …` and `df.drop(…)` count as
 * changing `df`, a read inside a function counts as a read of the cell. Candidates, like
 * the code graph's call edges.
 */
import type { Node, Parser } from 'web-tree-sitter';
import { neutraliseMagics } from '../../notebooks/magics.js';
import { loadGrammar, webTreeSitter } from './grammars.js';

/** What one cell does with names. */
export interface CellNames {
  /** Names bound at the cell's top level (assignment, import, def, class, for, with … as). */
  binds: string[];
  /** Names changed in place: `x[k] = …`, `x.attr = …`, `x += …`, `x.method(…)` as a statement. */
  changes: string[];
  /** Names read anywhere in the cell. */
  reads: string[];
  /** Names read per 1-based line. */
  readsByLine: Map<number, string[]>;
}

/** Where one name involved in a failure comes from. */
export interface NameOrigin {
  name: string;
  /** 0-based indices of earlier cells that bind it, in order. */
  boundIn: number[];
  /** 0-based indices of earlier cells that change it in place. */
  changedIn: number[];
  /** Names the binding cells read (what it was built from). */
  builtFrom: string[];
}

let parser: Promise<Parser> | undefined;

async function pythonParser(): Promise<Parser> {
  parser ??= (async () => {
    const grammar = await loadGrammar('python'); // initialises the runtime first
    const { Parser: TreeSitterParser } = await webTreeSitter();
    const p = new TreeSitterParser();
    p.setLanguage(grammar);
    return p;
  })();
  return parser;
}

/** The names each cell binds, changes and reads (non-code cells: `undefined`). */
export async function cellNames(
  cells: ReadonlyArray<{ cellType: string; source: string }>
): Promise<Array<CellNames | undefined>> {
  const p = await pythonParser();
  return cells.map((c) => {
    if (c.cellType !== 'code') return undefined;
    const tree = p.parse(neutraliseMagics(c.source).code);
    if (!tree) return undefined;
    try {
      return namesOf(tree.rootNode);
    } finally {
      tree.delete();
    }
  });
}

function namesOf(root: Node): CellNames {
  const binds = new Set<string>();
  const changes = new Set<string>();
  const reads = new Set<string>();
  const readsByLine = new Map<number, string[]>();
  const bound = new Set<number>(); // node ids of identifiers in binding position

  const bindTarget = (target: Node | null, topLevel: boolean): void => {
    if (!target) return;
    if (target.type === 'identifier') {
      bound.add(target.id);
      if (topLevel) binds.add(target.text);
      return;
    }
    if (target.type === 'subscript' || target.type === 'attribute') {
      const base = baseName(target);
      if (base && topLevel) changes.add(base);
      return;
    }
    for (const child of target.namedChildren) if (child) bindTarget(child, topLevel);
  };

  const visit = (node: Node, topLevel: boolean, locals: ReadonlySet<string>): void => {
    switch (node.type) {
      case 'assignment':
      case 'augmented_assignment': {
        const left = node.childForFieldName('left');
        bindTarget(left, topLevel);
        if (node.type === 'augmented_assignment' && left?.type === 'identifier' && topLevel) changes.add(left.text);
        break;
      }
      case 'for_statement':
      case 'for_in_clause':
        bindTarget(node.childForFieldName('left'), topLevel && node.type === 'for_statement');
        break;
      case 'as_pattern':
        bindTarget(node.childForFieldName('alias'), topLevel);
        break;
      case 'import_statement':
      case 'import_from_statement':
        // `from m import a` binds `a`, not `m`. Nodes are fresh objects on every access: compare ids.
        const moduleName = node.childForFieldName('module_name');
        for (const child of node.namedChildren) {
          if (!child || child.id === moduleName?.id) continue;
          const name =
            child.type === 'aliased_import'
              ? child.childForFieldName('alias')
              : child.type === 'dotted_name'
                ? child.namedChildren[0]
                : null;
          if (name) {
            bound.add(name.id);
            if (topLevel) binds.add(name.text);
          }
        }
        return;
      case 'function_definition':
      case 'class_definition': {
        const name = node.childForFieldName('name');
        if (name) {
          bound.add(name.id);
          if (topLevel) binds.add(name.text);
        }
        // A function's parameters and the names it assigns are its own, not reads of the notebook's.
        const params = node.childForFieldName('parameters');
        const body = node.childForFieldName('body');
        const own = new Set(locals);
        if (params && node.type === 'function_definition') for (const p of parameterNames(params)) own.add(p);
        if (body && node.type === 'function_definition') for (const n of assignedIn(body)) own.add(n);
        if (params) markParameters(params, bound);
        for (const child of node.namedChildren) if (child && child !== params) visit(child, false, own);
        return;
      }
      case 'lambda': {
        const params = node.childForFieldName('parameters');
        if (params) {
          markParameters(params, bound);
          const own = new Set([...locals, ...parameterNames(params)]);
          for (const child of node.namedChildren) if (child && child !== params) visit(child, false, own);
          return;
        }
        break;
      }
      case 'expression_statement': {
        // `df.drop(columns=…, inplace=True)`, `rows.append(x)`: a method call as a statement changes its object.
        const call = node.namedChildren[0];
        const fn = call?.type === 'call' ? call.childForFieldName('function') : null;
        if (fn?.type === 'attribute' && topLevel) {
          const base = baseName(fn);
          if (base) changes.add(base);
        }
        break;
      }
      case 'keyword_argument': {
        const name = node.childForFieldName('name');
        if (name) bound.add(name.id); // `f(x=1)`: `x` is no read
        break;
      }
      case 'attribute': {
        const attr = node.childForFieldName('attribute');
        if (attr) bound.add(attr.id); // `df.sales`: only `df` is a name
        break;
      }
      case 'identifier':
        if (!bound.has(node.id) && !locals.has(node.text)) {
          reads.add(node.text);
          const line = node.startPosition.row + 1;
          const list = readsByLine.get(line) ?? [];
          if (!list.includes(node.text)) list.push(node.text);
          readsByLine.set(line, list);
        }
        return;
    }
    for (const child of node.namedChildren) if (child) visit(child, topLevel && !isBlockScope(child), locals);
  };
  visit(root, true, new Set());
  return { binds: [...binds], changes: [...changes], reads: [...reads], readsByLine };
}

/** Names bound inside these stay local to them. */
function isBlockScope(node: Node): boolean {
  return (
    node.type === 'lambda' ||
    node.type === 'list_comprehension' ||
    node.type === 'dictionary_comprehension' ||
    node.type === 'set_comprehension' ||
    node.type === 'generator_expression'
  );
}

/** The names a parameter list declares. */
function parameterNames(params: Node): string[] {
  const out: string[] = [];
  for (const p of params.namedChildren) {
    if (!p) continue;
    const id =
      p.type === 'identifier'
        ? p
        : (p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'identifier') ?? null);
    if (id?.type === 'identifier') out.push(id.text);
  }
  return out;
}

/** Names a function body assigns (its locals), nested functions and classes not entered. */
function assignedIn(body: Node): Set<string> {
  const out = new Set<string>();
  const targets = (t: Node | null): void => {
    if (!t) return;
    if (t.type === 'identifier') out.add(t.text);
    else if (t.type === 'pattern_list' || t.type === 'tuple_pattern' || t.type === 'list_pattern')
      for (const c of t.namedChildren) targets(c);
  };
  const walk = (n: Node): void => {
    if (n.type === 'assignment' || n.type === 'augmented_assignment' || n.type === 'for_statement')
      targets(n.childForFieldName('left'));
    if (n.type === 'function_definition' || n.type === 'class_definition') {
      const name = n.childForFieldName('name');
      if (name) out.add(name.text);
      return;
    }
    if (n.type === 'lambda') return;
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(body);
  return out;
}

function markParameters(params: Node, bound: Set<number>): void {
  for (const p of params.namedChildren) {
    if (!p) continue;
    const id =
      p.type === 'identifier'
        ? p
        : (p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'identifier') ?? null);
    if (id) bound.add(id.id);
  }
}

/** `df` of `df["x"]`, `df.a.b`, `df.loc[…]`. */
function baseName(node: Node): string | undefined {
  let n: Node | null = node;
  while (n && (n.type === 'subscript' || n.type === 'attribute'))
    n = n.childForFieldName(n.type === 'subscript' ? 'value' : 'object');
  return n?.type === 'identifier' ? n.text : undefined;
}

/**
 * Walks back from `names` (read by the failing line of cell `failing`) through the cells
 * before it: for each name, the cells that bind or change it, and then the names those
 * binding cells read, breadth first, at most `limit` names.
 */
export function traceOrigins(
  cells: ReadonlyArray<CellNames | undefined>,
  failing: number,
  names: readonly string[],
  limit = 12
): NameOrigin[] {
  const out: NameOrigin[] = [];
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length && out.length < limit) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const boundIn: number[] = [];
    const changedIn: number[] = [];
    for (let i = 0; i < Math.min(failing, cells.length); i++) {
      const c = cells[i];
      if (!c) continue;
      if (c.binds.includes(name)) boundIn.push(i);
      else if (c.changes.includes(name)) changedIn.push(i);
    }
    if (!boundIn.length && !changedIn.length) continue; // a builtin, or defined nowhere above
    const builtFrom = [...new Set([...boundIn, ...changedIn].flatMap((i) => cells[i]!.reads))].filter(
      (n) => n !== name
    );
    out.push({ name, boundIn, changedIn, builtFrom });
    queue.push(...builtFrom);
  }
  return out;
}
