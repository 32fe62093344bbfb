/**
 * The `lsp` tool (SPEC LSP-1…6), `read` tier: code intelligence from the language server
 * of the file's nearest root. Positions are `line` + `symbol` (+ `cell` in notebooks),
 * never a column. The work is in `server/src/lsp/`; this file is the schema and dispatch.
 */
import path from 'node:path';
import type { LspDisplay } from '@cellmate/protocol';
import { z } from 'zod';
import { runChecker, parseCheckerOutput } from '../../lsp/checker.js';
import { waitForDocument } from '../../lsp/diagnostics.js';

import type { DocumentSync } from '../../lsp/documents.js';
import { LspUnavailableError, type LspService } from '../../lsp/lsp-service.js';
import {
  LSP_CAPS,
  codeActions,
  fileDiagnostics,
  hover,
  navigate,
  symbols,
  truncation,
  type ActionResult,
  type CardLocation
} from '../../lsp/operations.js';
import { locateCommand } from '../../lsp/locate.js';
import { checkerArgs } from '../../lsp/untrusted-launch.js';
import { withheldLine } from '../../lsp/location-gate.js';
import { resultGate } from './result-gate.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed, type ToolContext } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { globToRegExp, walkFiles } from '../../workspace/walk.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';

const ACTIONS = [
  'diagnostics',
  'definition',
  'type_definition',
  'implementation',
  'references',
  'hover',
  'symbols',
  'code_actions',
  'status',
  'reload'
] as const;
const NAVIGATION = new Set(['definition', 'type_definition', 'implementation', 'references', 'hover']);

export const lspParameters = z.strictObject({
  action: z
    .enum(ACTIONS, { error: `must be one of ${ACTIONS.join(', ')}` })
    .describe('What to ask the language server.'),
  file: z
    .string()
    .min(1)
    .optional()
    .describe('File relative to the workspace. diagnostics: also a glob ("src/**/*.py") or "*" (the project checker).'),
  line: z.number().int().min(1).optional().describe('1-based line the symbol is on (in the cell, for notebooks).'),
  symbol: z
    .string()
    .min(1)
    .optional()
    .describe('Text on that line naming the symbol, e.g. "load_data"; "load_data#2" = its 2nd occurrence on the line.'),
  cell: z.string().min(1).optional().describe('Notebooks: the cell id (from notebook_read) or "#N" (the N-th cell).'),
  query: z
    .string()
    .optional()
    .describe('symbols: search the workspace for this name (without it: the symbols of `file`).')
});

type LspArgs = z.output<typeof lspParameters>;

/**
 * One project checker `diagnostics "*"` tried (in the result's metadata, for callers that
 * judge it — Review's type-check axis): which files it covers and whether it ran.
 */
export interface CheckerRun {
  server: string;
  command: string;
  /** Workspace-relative root it ran in (`.` for the workspace). */
  root: string;
  /** The file extensions its server claims, e.g. `.py`. */
  extensions: string[];
  ran: boolean;
  problem?: string;
}

/** Builds the `lsp` tool around a language-server service and its document sync. */
export function createLspTool(service: LspService, docs: DocumentSync) {
  return defineTool({
    name: 'lsp',
    tier: 'read',
    relaysServerText: true,
    description: TOOL_DESCRIPTIONS.lsp,
    parameters: lspParameters,
    examples: [
      {
        args: { action: 'definition', file: 'src/app.py', line: 12, symbol: 'load_data' },
        comment: 'where a function is defined'
      },
      {
        args: { action: 'references', file: 'analysis.ipynb', cell: '#3', line: 2, symbol: 'clean' },
        comment: 'every use of a name, from a notebook cell'
      },
      { args: { action: 'diagnostics', file: '*' }, comment: 'run the project checker' }
    ],
    timeoutMs: 120_000,
    paths: (a) => [a.file && !/[*?[]/.test(a.file) ? a.file : undefined],
    async execute(args, ctx) {
      try {
        const r = await run(service, docs, args, ctx);
        const display: LspDisplay = { kind: 'lsp', action: args.action, locations: r.locations.map(toDisplay) };
        return {
          title: r.title,
          output: r.output,
          ...(r.locations.length ? { display } : {}),
          metadata: { action: args.action, count: r.locations.length, ...(r.checkers ? { checkers: r.checkers } : {}) }
        };
      } catch (error) {
        if (error instanceof LspUnavailableError)
          throw new ToolInputError(
            `${error.message}${error.reason === 'no-root-marker' || error.reason === 'executable-not-found' ? ' (lsp status shows what each server needs)' : ''}`
          );
        throw error;
      }
    }
  });
}

function toDisplay(l: CardLocation): LspDisplay['locations'][number] {
  const severity =
    l.note === 'error' || l.note === 'warning' || l.note === 'info' || l.note === 'hint' ? l.note : undefined;
  return {
    path: l.path,
    line: l.line,
    text: l.text,
    ...(l.cell ? { cell: l.cell } : {}),
    ...(l.note && !severity ? { note: l.note } : {}),
    ...(severity ? { severity } : {})
  };
}

async function run(
  service: LspService,
  docs: DocumentSync,
  args: LspArgs,
  ctx: ToolContext
): Promise<ActionResult & { checkers?: CheckerRun[] }> {
  if (args.action === 'status') {
    const probe = args.file ? (await resolveWorkspacePath(ctx.workspace, args.file)).absolute : undefined;
    return { title: 'lsp status', output: await service.status(probe), locations: [] };
  }
  if (args.action === 'diagnostics' && args.file && (args.file === '*' || /[*?[]/.test(args.file)))
    return many(service, docs, args.file, ctx);
  if (!args.file) throw new ToolInputError(`lsp ${args.action} needs "file" (a path relative to the workspace).`);
  const resolved = await resolveWorkspacePath(ctx.workspace, args.file);
  if (!resolved.exists)
    throw new ToolInputError(`File not found: "${args.file}". Paths are relative to the workspace root.`);
  if (args.action === 'reload')
    return { title: 'lsp reload', output: await service.reload(resolved.absolute), locations: [] };
  if (NAVIGATION.has(args.action) && (args.line === undefined || args.symbol === undefined)) {
    throw new ToolInputError(
      `lsp ${args.action} needs "line" (1-based) and "symbol" (the text naming it on that line); positions are never guessed.`
    );
  }
  const doc = await docs.sync(resolved.relative, resolved.absolute, ctx.signal);
  const since = doc.sequenceBefore;
  // A document the server just got is answered after it analysed it (its first publish):
  // before that, a fresh basedpyright has not enumerated the root and finds 1 reference of 7.
  if (doc.changed && args.action !== 'diagnostics') await waitForDocument(doc, ctx.signal, doc.waitMs, 0);
  const pos = { line: args.line!, symbol: args.symbol!, ...(args.cell ? { cell: args.cell } : {}) };
  switch (args.action) {
    case 'definition':
    case 'type_definition':
    case 'implementation':
    case 'references':
      return navigate(docs, doc, args.action, pos, resultGate(ctx), ctx.signal);
    case 'hover':
      return hover(docs, doc, pos, resultGate(ctx), ctx.signal);
    case 'symbols':
      return symbols(docs, doc, args.query, resultGate(ctx), ctx.signal);
    case 'code_actions':
      if (args.line === undefined)
        throw new ToolInputError('lsp code_actions needs "line" (1-based; and "cell" in notebooks).');
      return codeActions(
        doc,
        { line: args.line, ...(args.cell ? { cell: args.cell } : {}), ...(args.symbol ? { symbol: args.symbol } : {}) },
        ctx.signal
      );
    case 'diagnostics': {
      const r = await fileDiagnostics(docs, doc, since, ctx.signal);
      const shown = r.shown.slice(0, LSP_CAPS.diagnostics);
      const late = r.complete
        ? ''
        : '\n(The server had not finished checking; later diagnostics arrive with the next result.)';
      return {
        title: `lsp diagnostics: ${resolved.relative} (${r.total})`,
        output: r.total
          ? `${r.total} diagnostic${r.total === 1 ? '' : 's'} in ${resolved.relative}:\n${[...shown, ...truncation(r.total, LSP_CAPS.diagnostics, 'diagnostics')].join('\n')}${late}`
          : `No diagnostics in ${resolved.relative}.${late}`,
        locations: r.locations.slice(0, LSP_CAPS.diagnostics)
      };
    }
    default:
      throw new ToolInputError(`Unknown action ${args.action}.`);
  }
}

/** diagnostics on a glob (each matching file through its server) or `*` (the project checkers). */
async function many(
  service: LspService,
  docs: DocumentSync,
  pattern: string,
  ctx: ToolContext
): Promise<ActionResult & { checkers?: CheckerRun[] }> {
  if (pattern === '*') {
    const lines: string[] = [];
    const checkers: CheckerRun[] = [];
    const locations: CardLocation[] = [];
    let total = 0;
    let withheld = 0;
    const gate = resultGate(ctx);
    for (const entry of await service.servers()) {
      if (!entry.checker) continue;
      const probe = path.join(ctx.workspace, `probe${Object.keys(entry.languages)[0] ?? ''}`);
      const [a] = (await service.availability(probe)).filter((x) => x.entry.name === entry.name);
      if (!a?.ok) continue;
      const run: CheckerRun = {
        server: entry.name,
        command: entry.checker.command,
        root: path.relative(ctx.workspace, a.root) || '.',
        extensions: Object.keys(entry.languages),
        ran: false
      };
      checkers.push(run);
      const exe = await locateCommand(entry.checker.command, {
        root: a.root,
        workspace: ctx.workspace,
        pathEnv: service.env.PATH,
        bundledBins: [path.dirname(a.executable), ...service.bundledBins],
        trusted: a.trusted
      });
      if (!exe) {
        lines.push(`${entry.name}: the checker "${entry.checker.command}" was not found.`);
        run.problem = `the checker "${entry.checker.command}" was not found`;
        continue;
      }
      const r = await runChecker(
        exe,
        checkerArgs(exe, entry.checker.args, a.trusted, service.pinned),
        a.root,
        service.env,
        ctx.signal
      );
      let found;
      try {
        found = parseCheckerOutput(entry.checker.format, r.stdout, a.root);
      } catch (e) {
        lines.push(
          `${entry.name}: could not read the output of ${entry.checker.command} (${(e as Error).message}); stderr: ${r.stderr.trim().slice(0, 300)}`
        );
        run.problem = `could not read the output of ${entry.checker.command}`;
        continue;
      }
      run.ran = true;
      // A checker reports every file of its root, and whatever its configuration adds: each is judged like a location.
      const all = found;
      found = [];
      for (const d of all) if ((await gate(d.file)) === 'show') found.push(d);
      withheld += all.length - found.length;
      total += found.length;
      lines.push(
        `${entry.checker.command} ${entry.checker.args.join(' ')} in ${path.relative(ctx.workspace, a.root) || '.'}: ${found.length} diagnostic${found.length === 1 ? '' : 's'}`
      );
      for (const d of found.slice(0, LSP_CAPS.diagnostics)) {
        const rel = path.relative(ctx.workspace, d.file);
        lines.push(`${rel}:${d.line} [${d.severity}] ${d.message.split('\n')[0]}${d.code ? ` (${d.code})` : ''}`);
        locations.push({ path: rel, line: d.line, text: '', note: d.severity });
      }
      lines.push(...truncation(found.length, LSP_CAPS.diagnostics, 'diagnostics'));
    }
    if (lines.length === 0)
      throw new ToolInputError(
        'No project checker can run here: no configured server has both its root marker and its executable (lsp status says which half is missing).'
      );
    return {
      title: `lsp diagnostics *: ${total}`,
      output: [...lines, ...withheldLine(withheld, 'diagnostic')].join('\n'),
      locations,
      checkers
    };
  }
  const re = globToRegExp(pattern);
  const files: string[] = [];
  for await (const rel of walkFiles(ctx.workspace, ctx.workspace, ctx.signal))
    if (re.test(rel) && pathAllowed(ctx, rel)) files.push(rel);
  if (files.length === 0) throw new ToolInputError(`No files match ${JSON.stringify(pattern)}.`);
  const out: string[] = [];
  const locations: CardLocation[] = [];
  let total = 0;
  let unserved = 0;
  for (const rel of files.slice(0, 100)) {
    const absolute = path.join(ctx.workspace, rel);
    try {
      const doc = await docs.sync(rel, absolute, ctx.signal);
      const r = await fileDiagnostics(docs, doc, doc.sequenceBefore, ctx.signal);
      total += r.total;
      out.push(...r.shown);
      locations.push(...r.locations);
    } catch (error) {
      if (error instanceof LspUnavailableError) unserved++;
      else throw error;
    }
  }
  const shown = out.slice(0, LSP_CAPS.diagnostics);
  const head = `${total} diagnostic${total === 1 ? '' : 's'} in ${Math.min(files.length, 100)} file${files.length === 1 ? '' : 's'} matching ${JSON.stringify(pattern)}${unserved ? ` (${unserved} without a usable server)` : ''}${files.length > 100 ? ` (only the first 100 of ${files.length} files were checked; narrow the glob)` : ''}`;
  return {
    title: `lsp diagnostics ${pattern}: ${total}`,
    output: [head + (total ? ':' : '.'), ...shown, ...truncation(out.length, LSP_CAPS.diagnostics, 'diagnostics')].join(
      '\n'
    ),
    locations: locations.slice(0, LSP_CAPS.diagnostics)
  };
}
