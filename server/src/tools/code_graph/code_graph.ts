import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { placeLabel } from '../../structural/documents.js';
import { CodeGraphs, type GraphDocument } from '../../structural/graph/code-graph.js';

export const codeGraphParameters = z.strictObject({
  action: z
    .enum(['symbols', 'callers', 'callees', 'impact'], { error: 'must be one of symbols, callers, callees, impact' })
    .describe('symbols: definitions; callers: direct callers; callees: what it calls; impact: transitive callers.'),
  symbol: z
    .string({ error: 'must be a function, class or method name' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .optional()
    .describe('Name or qualified name (Class.method). Required except for symbols.'),
  path: z
    .string({ error: 'must be a path relative to the workspace' })
    .optional()
    .describe('Only definitions (symbols) or callers under this file or folder. Default: the workspace.'),
  max_results: z
    .number({ error: 'must be a positive integer' })
    .int()
    .min(1)
    .max(1000, { error: 'must be at most 1000' })
    .optional()
    .describe('Default 100.')
});

const where = (doc: GraphDocument, line: number): string =>
  doc.cell ? `${placeLabel(doc)} line ${line}` : `${doc.file}:${line}`;

/** `code_graph` over one graph per workspace (SPEC INTEL-1/2). */
export function createCodeGraphTool(graphs: CodeGraphs = new CodeGraphs()): ToolDefinition {
  return defineTool({
    name: 'code_graph',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.code_graph,
    parameters: codeGraphParameters,
    examples: [
      {
        args: { action: 'impact', symbol: 'load_data' },
        comment: 'everything that depends on load_data, across files and notebooks'
      },
      { args: { action: 'symbols', path: 'src/pipeline.py' }, comment: 'what a file defines' }
    ],
    timeoutMs: 120_000,
    paths: (args) => [args.path ?? '.'],
    async execute(args, ctx) {
      if (args.action !== 'symbols' && !args.symbol)
        throw new ToolInputError(
          `${args.action} needs symbol: the function, class or method name (e.g. "load_data" or "Pool.drain").`
        );
      const scope = await resolveWorkspacePath(ctx.workspace, args.path ?? '.');
      if (!scope.exists)
        throw new ToolInputError(`Not found: "${args.path}". Paths are relative to the workspace root.`);
      const under = (file: string): boolean =>
        scope.relative === '.' || file === scope.relative || file.startsWith(`${scope.relative}/`);
      const graph = graphs.of(ctx.workspace);
      await graph.refresh(ctx.signal);
      const docs = graph.documents((f) => pathAllowed(ctx, f));
      const limit = args.max_results ?? 100;
      const finish = (lines: string[], noun: string, extra = ''): { title: string; output: string } => {
        const shown = lines.slice(0, limit);
        const more =
          lines.length > limit ? `; first ${limit} shown, raise max_results or narrow path for the rest` : '';
        return {
          title: `code_graph ${args.action}${args.symbol ? ` ${args.symbol}` : ''}: ${lines.length}`,
          output: [...shown, `(${lines.length} ${noun}${extra}${more})`].join('\n')
        };
      };
      if (args.action === 'symbols') {
        const lines = docs
          .filter((d) => under(d.file))
          .flatMap((d) => d.symbols.map((s) => `${where(d, s.line)} ${s.kind} ${s.qualified}`));
        return finish(lines, lines.length === 1 ? 'definition' : 'definitions');
      }
      const targets = graph.find(args.symbol!, docs);
      if (targets.length === 0)
        throw new ToolInputError(
          `No definition named ${JSON.stringify(args.symbol)} in the workspace's Python, TypeScript, TSX or JavaScript files or notebooks. List names with action "symbols".`
        );
      const defs = ` of ${args.symbol} (defined at ${targets
        .slice(0, 5)
        .map((t) => where(t.doc, t.line))
        .join(', ')}${targets.length > 5 ? ', …' : ''})`;
      if (args.action === 'callers') {
        const lines = graph
          .callers(targets, docs)
          .filter((c) => under(c.doc.file))
          .map(({ doc, call }) => `${where(doc, call.line)} ${call.caller} → ${call.callee}`);
        return finish(lines, lines.length === 1 ? 'call site' : 'call sites', defs);
      }
      if (args.action === 'callees') {
        const lines = graph
          .callees(targets)
          .map(({ doc, call }) => `${where(doc, call.line)} ${call.caller} → ${call.callee}`);
        return finish(lines, lines.length === 1 ? 'call' : 'calls', defs);
      }
      const entries = graph.impact(targets, docs).filter((e) => under(e.doc.file));
      const lines = entries.map((e) => `depth ${e.depth}: ${e.caller} at ${where(e.doc, e.line)} (calls ${e.calls})`);
      const files = new Set(entries.map((e) => e.doc.file)).size;
      return finish(
        lines,
        `transitive caller${lines.length === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}`,
        defs
      );
    }
  });
}
