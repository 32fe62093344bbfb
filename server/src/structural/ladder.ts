/**
 * The scaffold ladder (SPEC AST-4). A snippet is tried, in order, as a statement, as an
 * expression (a call argument, which is where `timeout=$T` is a keyword argument), as a
 * class member, and at top level (the pattern as ast-grep reads it, which also takes
 * several statements). A rung *accepts* the snippet when its scaffold parses without an
 * error or a missing token and one node spans exactly the snippet; that node's kind is
 * the rung's ast-grep `selector` (FACTS: `{context, selector}`). Searching uses the first
 * accepting rung that finds something (so `timeout=$T`, also a valid assignment, finds
 * keyword arguments when nothing assigns `timeout`), and says which rung that was. No
 * accepting rung → {@link UnparseablePatternError} with the parser's complaint.
 */
import type { NapiConfig, SgNode } from '@ast-grep/napi';
import { astGrep } from './ast-languages.js';
import { UnparseablePatternError } from './errors.js';
import { expandoChar, napiLanguage, type StructuralLanguage } from './languages.js';

/** The ladder's rungs, in order. */
export type Rung = 'statement' | 'expression' | 'class member' | 'top level';

/** One accepting rung: the matcher ast-grep runs. */
export interface CompiledRung {
  rung: Rung;
  matcher: NapiConfig;
  /** The node kind the snippet is (absent for top level, where ast-grep decides). */
  selector?: string;
  /**
   * Texts every match must contain: the pattern's named leaves that are not metavariables
   * (identifiers, literals). ast-grep matches a pattern's leaf only to a leaf of the same
   * text, so a document whose text lacks one of them cannot match and is not parsed. In
   * Python also its keywords and operators of two characters or more (`+=`, `lambda`,
   * `else`; see `literalLeaves`).
   */
  words: string[];
}

/** A pattern compiled for one language: every accepting rung, in ladder order. */
export interface CompiledPattern {
  pattern: string;
  language: StructuralLanguage;
  rungs: CompiledRung[];
}

interface Scaffold {
  rung: Rung;
  /** Builds the context; `at` is where the snippet starts in it. */
  wrap(snippet: string): { context: string; at: number };
}

const indent = (snippet: string, by: string): string =>
  snippet
    .split('\n')
    .map((l, i) => (i === 0 || l.length > 0 ? by + l : l))
    .join('\n');

function scaffolds(language: StructuralLanguage): Scaffold[] {
  const asIs: Scaffold = { rung: 'statement', wrap: (s) => ({ context: s, at: 0 }) };
  const argument: Scaffold = { rung: 'expression', wrap: (s) => ({ context: `__cm(${s})`, at: 5 }) };
  const member: Scaffold =
    language === 'python'
      ? { rung: 'class member', wrap: (s) => ({ context: `class __Cm:\n${indent(s, '    ')}\n`, at: 16 }) }
      : { rung: 'class member', wrap: (s) => ({ context: `class __Cm {\n${s}\n}`, at: 13 }) };
  return [asIs, argument, member];
}

/** Compiles `pattern` through the ladder; throws {@link UnparseablePatternError}. */
export function compilePattern(pattern: string, language: StructuralLanguage): CompiledPattern {
  const snippet = pattern.replace(/\s+$/, '');
  const lang = napiLanguage(language);
  const rungs: CompiledRung[] = [];
  for (const scaffold of scaffolds(language)) {
    const { context, at } = scaffold.wrap(snippet);
    const root = astGrep().parse(lang, withExpando(context, language)).root();
    if (firstProblem(root)) continue;
    const end =
      scaffold.rung === 'class member' && language === 'python'
        ? context.replace(/\s+$/, '').length
        : at + snippet.length;
    // A trailing `;` is a sibling token of a TypeScript class field, not part of it.
    const node = exactNode(root, at, end) ?? (snippet.endsWith(';') ? exactNode(root, at, end - 1) : undefined);
    if (!node) continue;
    const nodeEnd = node.range().end.index;
    const selector = String(node.kind());
    // ast-grep's selector picks the first node of that kind in the context: it must be ours.
    const first = firstOfKind(root, selector);
    if (!first || first.range().start.index !== at || first.range().end.index !== nodeEnd) continue;
    rungs.push({
      rung: scaffold.rung,
      selector,
      matcher: { rule: { pattern: { context, selector } } },
      words: literalLeaves(node, language)
    });
  }
  const top = astGrep().parse(lang, withExpando(snippet, language)).root();
  const problem = firstProblem(top);
  if (!problem)
    rungs.push({ rung: 'top level', matcher: { rule: { pattern: snippet } }, words: literalLeaves(top, language) });
  if (rungs.length === 0)
    throw new UnparseablePatternError(pattern, language, problem ?? 'no single piece of code spans the whole pattern');
  // Check ast-grep itself accepts each rung's pattern (it may still refuse one).
  const usable = rungs.filter((r) => {
    try {
      top.find(r.matcher);
      return true;
    } catch {
      return false;
    }
  });
  if (usable.length === 0)
    throw new UnparseablePatternError(pattern, language, problem ?? 'ast-grep refused every scaffold');
  return { pattern, language, rungs: usable };
}

/** `$NAME` / `$$$NAME` / `$_` written the way ast-grep parses them in this language. */
function withExpando(text: string, language: StructuralLanguage): string {
  const e = expandoChar(language);
  return e === '$' ? text : text.replace(/\$(?=[A-Z_$])/g, e);
}

/**
 * The distinct texts of the named leaves under `node` a match must repeat verbatim: not a
 * metavariable (nor anything holding one, such as a string with `$X` inside) and not a
 * comment (which matching may skip).
 *
 * ast-grep matches an unnamed leaf (a keyword, an operator) by its kind alone — a
 * workaround for tree-sitter-typescript's wrong spans of some unnamed nodes — so its text
 * is a word only where a kind always has that text. In tree-sitter-python every unnamed
 * kind is the literal string it lexes except two aliases, `is not` and `not in`, whose text
 * keeps the code's spacing; those hold a space and are left out, as are one-character
 * tokens (in almost every file, and the external scanner's `)`, `]`, `}`). Python only: in
 * JavaScript and TypeScript a `;` may be inserted, and kinds are matched across spans.
 */
function literalLeaves(node: SgNode, language: StructuralLanguage): string[] {
  const e = expandoChar(language);
  const words = new Set<string>();
  const stack: SgNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const children = n.children();
    if (children.length === 0) {
      const text = n.text();
      if (
        n.isNamed() &&
        text.length > 0 &&
        !text.includes(e) &&
        !text.includes('$') &&
        !/comment/i.test(String(n.kind()))
      )
        words.add(text);
      else if (
        !n.isNamed() &&
        language === 'python' &&
        text.length > 1 &&
        text === String(n.kind()) &&
        !/\s/.test(text)
      )
        words.add(text);
    }
    for (const c of children) stack.push(c);
  }
  return [...words];
}

/** The parser's first complaint (an ERROR node or a missing token), or undefined. */
export function firstProblem(root: SgNode): string | undefined {
  const stack: SgNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const r = n.range();
    const where = `line ${r.start.line + 1}, column ${r.start.column + 1}`;
    if (n.kind() === 'ERROR') return `syntax error at ${where} near ${JSON.stringify(n.text().slice(0, 40))}`;
    const children = n.children();
    if (children.length === 0 && !n.isNamed() && r.start.index === r.end.index && String(n.kind()).length > 0) {
      return `missing ${JSON.stringify(String(n.kind()))} at ${where}`;
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

/** The deepest named node spanning exactly [start, end). */
function exactNode(root: SgNode, start: number, end: number): SgNode | undefined {
  let found: SgNode | undefined;
  let n: SgNode | undefined = root;
  while (n) {
    const r = n.range();
    if (r.start.index === start && r.end.index === end && n.isNamed() && n !== root) found = n;
    n = n
      .children()
      .find(
        (c) =>
          c.range().start.index <= start &&
          c.range().end.index >= end &&
          (c.range().end.index > c.range().start.index || start === end)
      );
  }
  return found;
}

function firstOfKind(root: SgNode, kind: string): SgNode | undefined {
  const stack: SgNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.kind() === kind) return n;
    const children = n.children();
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}
