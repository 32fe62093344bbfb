/**
 * The names a Python cell binds at its top level — assignments, `def`, `class`, imports,
 * `for`/`with … as` targets — from a tree-sitter parse (the code graph's grammar). A rewind
 * names them: undoing the cells does not unset them in the kernel.
 */
import type { Node } from 'web-tree-sitter';
import { loadGrammar, webTreeSitter } from '../structural/graph/grammars.js';

let parser: Promise<import('web-tree-sitter').Parser> | undefined;

async function pythonParser(): Promise<import('web-tree-sitter').Parser> {
  parser ??= (async () => {
    const grammar = await loadGrammar('python');
    const { Parser } = await webTreeSitter();
    const p = new Parser();
    p.setLanguage(grammar);
    return p;
  })();
  return parser;
}

/** Top-level names `source` binds, in order, each once. IPython magic and shell lines are skipped. */
export async function assignedNames(source: string): Promise<string[]> {
  const code = source
    .split('\n')
    .map((l) => (/^\s*[%!]/.test(l) ? '' : l))
    .join('\n');
  const tree = (await pythonParser()).parse(code);
  if (!tree) return [];
  const names: string[] = [];
  const add = (n: string | undefined): void => {
    if (n && !names.includes(n)) names.push(n);
  };
  const targets = (node: Node | null | undefined): void => {
    if (!node) return;
    if (node.type === 'identifier') add(node.text);
    else if (['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'parenthesized_expression'].includes(node.type)) node.namedChildren.forEach((c) => targets(c));
  };
  const statement = (node: Node): void => {
    switch (node.type) {
      case 'expression_statement':
        node.namedChildren.forEach((c) => c && (c.type === 'assignment' || c.type === 'augmented_assignment') && assignment(c));
        break;
      case 'function_definition':
      case 'class_definition':
        add(node.childForFieldName('name')?.text);
        break;
      case 'decorated_definition':
        add(node.childForFieldName('definition')?.childForFieldName('name')?.text);
        break;
      case 'import_statement':
      case 'import_from_statement':
        // `from m import a`: m is not bound (nodes are fresh objects: compare positions).
        for (const c of node.namedChildren) {
          if (!c || c.startIndex === node.childForFieldName('module_name')?.startIndex) continue;
          if (c.type === 'aliased_import') add(c.childForFieldName('alias')?.text);
          else if (c.type === 'dotted_name') add(c.text.split('.')[0]);
        }
        break;
      case 'for_statement':
        targets(node.childForFieldName('left'));
        node.namedChildren.forEach((c) => c?.type === 'block' && c.namedChildren.forEach((s) => s && statement(s)));
        break;
      case 'with_statement':
        node.descendantsOfType('as_pattern_target').forEach((t) => t && targets(t.namedChildren[0]));
        node.namedChildren.forEach((c) => c?.type === 'block' && c.namedChildren.forEach((s) => s && statement(s)));
        break;
      case 'if_statement':
      case 'try_statement':
      case 'while_statement':
        node.descendantsOfType('block').forEach((b) => b?.parent && (b.parent === node || ['else_clause', 'elif_clause', 'except_clause', 'finally_clause'].includes(b.parent.type)) && b.namedChildren.forEach((s) => s && statement(s)));
        break;
    }
  };
  const assignment = (node: Node): void => {
    targets(node.childForFieldName('left'));
    const right = node.childForFieldName('right');
    if (right?.type === 'assignment') assignment(right); // a = b = 1
  };
  for (const s of tree.rootNode.namedChildren) if (s) statement(s);
  tree.delete();
  return names;
}
