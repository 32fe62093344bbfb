/**
 * Rewrites of structural matches (SPEC EDIT-1): the rewrite template with metavariables
 * substituted, applied to a document's text. ast-grep's `commitEdits` silently skips
 * overlapping edits (FACTS); here overlaps are found first: a match nested inside a
 * capture of an enclosing match of the same op (`f(f(1))` for `f($X)`) is rewritten
 * inside that capture, and every other overlap — between ops, or not inside a capture —
 * is an {@link OverlapError} naming both sites, so nothing is staged.
 */
import { ToolInputError } from '../base/tool-errors.js';
import { placeLabel } from './documents.js';
import type { StructuralMatch } from './search.js';

/** One match of one op, with the op's rewrite template. */
export interface RewriteSite {
  op: number;
  match: StructuralMatch;
  template: string;
}

/** A replacement in a document's source: [start, end) → `after`. */
export interface Replacement {
  start: number;
  end: number;
  before: string;
  after: string;
  /** 1-based line in the document. */
  line: number;
  /** Nested sites folded into this one. */
  nested: number;
}

/** Two replacements that cannot both be applied. */
export class OverlapError extends ToolInputError {
  constructor(
    readonly a: RewriteSite,
    readonly b: RewriteSite
  ) {
    const where = (s: RewriteSite): string =>
      `op ${s.op + 1} at ${placeLabel(s.match.doc)} line ${s.match.line} (${JSON.stringify(s.match.text.split('\n')[0]!.slice(0, 60))})`;
    super(
      `Overlapping replacements: ${where(a)} overlaps ${where(b)}. Nothing was staged. Make the patterns disjoint, or stage them in separate ast_edit calls (resolve the first before staging the second).`
    );
    this.name = 'OverlapError';
  }
}

/** The metavariables a template uses, checked against the pattern's (an unknown one is an error). */
export function checkTemplate(template: string, pattern: string, op: number): void {
  const known = new Set([...pattern.matchAll(/\$(?:\$\$)?([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
  for (const m of template.matchAll(/\$(?:\$\$)?([A-Z][A-Z0-9_]*)/g)) {
    if (!known.has(m[1]!))
      throw new ToolInputError(
        `op ${op + 1}: the rewrite uses $${m[1]} but the pattern has no such metavariable (it has ${known.size ? [...known].map((k) => `$${k}`).join(', ') : 'none'}).`
      );
  }
}

/**
 * The replacements for the sites of one document (all ops), outermost first, sorted, with
 * nested same-op sites folded into their enclosing capture; throws {@link OverlapError}.
 */
export function planReplacements(sites: readonly RewriteSite[]): Replacement[] {
  const sorted = [...sites].sort((x, y) => x.match.start - y.match.start || y.match.end - x.match.end || x.op - y.op);
  const roots: Node[] = [];
  const stack: Node[] = [];
  for (const site of sorted) {
    const node: Node = { site, children: [] };
    while (stack.length > 0 && stack[stack.length - 1]!.site.match.end <= site.match.start) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) {
      const p = parent.site;
      const same = p.match.start === site.match.start && p.match.end === site.match.end;
      if (same || p.op !== site.op || site.match.end > p.match.end || !insideCapture(p.match, site.match))
        throw new OverlapError(p, site);
      parent.children.push(node);
    } else roots.push(node); // the stack is empty: it starts after every earlier site ends
    stack.push(node);
  }
  return roots.map((n) => ({
    start: n.site.match.start,
    end: n.site.match.end,
    before: n.site.match.text,
    after: render(n),
    line: n.site.match.line,
    nested: count(n) - 1
  }));
}

interface Node {
  site: RewriteSite;
  children: Node[];
}

function insideCapture(outer: StructuralMatch, inner: StructuralMatch): boolean {
  return Object.values(outer.spanRanges).some(([a, b]) => inner.start >= a && inner.end <= b);
}

function count(n: Node): number {
  return 1 + n.children.reduce((s, c) => s + count(c), 0);
}

/** The template with each metavariable replaced by its capture (nested rewrites applied inside). */
function render(n: Node): string {
  const { match, template } = n.site;
  const source = match.doc.source;
  const capture = (name: string): string => {
    const range = match.spanRanges[name];
    if (!range) return '';
    const [a, b] = range;
    const inner = n.children.filter((c) => c.site.match.start >= a && c.site.match.end <= b);
    let out = '';
    let at = a;
    for (const c of inner) {
      out += source.slice(at, c.site.match.start) + render(c);
      at = c.site.match.end;
    }
    return out + source.slice(at, b);
  };
  return template.replace(
    /\$\$\$([A-Z][A-Z0-9_]*)|\$([A-Z][A-Z0-9_]*)/g,
    (_, multi: string | undefined, single: string | undefined) => capture((multi ?? single)!)
  );
}

/** `source` with the (sorted, disjoint) replacements applied. */
export function applyReplacements(source: string, replacements: readonly Replacement[]): string {
  let out = '';
  let at = 0;
  for (const r of replacements) {
    out += source.slice(at, r.start) + r.after;
    at = r.end;
  }
  return out + source.slice(at);
}
