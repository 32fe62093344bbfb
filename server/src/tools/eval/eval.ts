/**
 * The `eval` tool (SPEC EVAL-1…6): runs a cell in a persistent kernel through the
 * {@link createKernelRunner} kernel path (shared with `notebook_run`); `tool()` calls from the cell re-enter the registry with the
 * actor `kernel` and the calling turn's context (surface/profile, chat, signal), so tiers,
 * policy, approvals and audit apply exactly as to the model's own calls.
 */
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { dangerousCommandReason } from '../../policy/dangerous-command.js';
import { shellSubjects } from '../../policy/shell-subjects.js';
import { defineTool, type ExtraJudgement } from '../../gate/define-tool.js';
import { findProcessCalls } from './process-calls.js';
import { formatEval } from './format.js';
import { createKernelRunner, type KernelRunnerOptions } from './kernel-runner.js';

/** setTimeout's maximum: the registry's per-call timeout is off for eval (the idle budget rules). */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/** Characters of `description` the transcript card shows; a longer one is cut at a word and the result says so. */
export const MAX_DESCRIPTION_CHARS = 80;

/**
 * The card's label for a cell (EVAL-1: label, don't gate). Any phrase is accepted; one over
 * {@link MAX_DESCRIPTION_CHARS} is cut at a word boundary; a blank one becomes
 * `Run: <first line of code>`. `note` says what was changed (HARN-2), for the result.
 */
export function cellLabel(description: string, code: string): { label: string; note?: string } {
  const flat = description.replace(/\s+/g, ' ').trim();
  if (flat === '') {
    const first =
      code
        .split('\n')
        .map((l) => l.trim())
        .find(Boolean) ?? '(empty cell)';
    const { label } = cellLabel(`Run: ${first}`, '');
    return { label, note: `description was empty; the card shows "${label}"` };
  }
  if (flat.length <= MAX_DESCRIPTION_CHARS) return { label: flat };
  const cut = flat.slice(0, MAX_DESCRIPTION_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  const label = `${(space > MAX_DESCRIPTION_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
  return { label, note: `description is longer than ${MAX_DESCRIPTION_CHARS} characters; the card shows "${label}"` };
}

export const evalParameters = z.object({
  code: z
    .string()
    .describe(
      'The cell to run. The last expression is echoed; magics such as %pip, %cd, !cmd, %%bash, %%timeit are rewritten and reported.'
    ),
  description: z
    .string({ error: 'must be a short phrase saying what the cell does, e.g. "Load sales.csv and show first rows"' })
    .describe('A short phrase (about 5–10 words) saying what the cell does; labels the cell in the transcript.'),
  language: z
    .enum(['python', 'javascript'])
    .default('python')
    .describe('`python` (IPython, default) or `javascript` (Node.js).'),
  reset: z
    .boolean()
    .default(false)
    .describe('Discard the interpreter and start clean before running (on a notebook kernel: restarts it).')
});

/** The kernels, the registry `tool()` calls re-enter and the idle budget (see {@link KernelRunnerOptions}). */
export type EvalToolOptions = KernelRunnerOptions;

/** Builds the eval tool around a kernel manager (TIER-3: registered only with one). */
export function createEvalTool(options: EvalToolOptions) {
  const runner = createKernelRunner(options);
  return defineTool({
    name: 'eval',
    tier: 'exec',
    description: TOOL_DESCRIPTIONS.eval,
    parameters: evalParameters,
    examples: [
      {
        args: {
          code: 'import pandas as pd\ndf = pd.read_csv("sales.csv")\ndf.head()',
          description: 'Load sales.csv and show the first rows'
        },
        comment: 'load data and look at it (Python, the default)'
      },
      {
        args: {
          code: 'df.groupby("region").revenue.sum().plot.bar()',
          description: 'Plot total revenue per region as bars'
        },
        comment: 'a figure comes back as an image'
      },
      {
        args: { code: '%pip install tabulate', description: 'Install tabulate into the kernel environment' },
        comment: 'install a package, then import it in the next eval'
      },
      {
        args: {
          code: 'print(tool("read", {"path": "notes.md"}))',
          description: 'Read notes.md through the tool bridge'
        },
        comment: 'call another tool from code'
      },
      {
        args: {
          code: 'const r = await fetch("https://example.com"); r.status',
          description: 'Fetch example.com and show the HTTP status',
          language: 'javascript'
        },
        comment: 'JavaScript with top-level await'
      }
    ],
    timeoutMs: NO_TIMEOUT_MS,
    // EVAL-5: a cell that spawns processes or deletes files is also judged as `shell`.
    alsoJudgedAs: (args) => shellJudgement(args.code, args.language),
    // Stop interrupts the cell; its result then says "[Interrupted: …]".
    abortGraceMs: 5_000,
    async execute(args, ctx) {
      const { handle, notes, outcome } = await runner.run(ctx, {
        code: args.code,
        language: args.language,
        reset: args.reset
      });
      const { label, note } = cellLabel(args.description, args.code);
      const privateTo = ctx.worker && !ctx.worker.sharesKernel ? `worker ${ctx.worker.id}` : undefined;
      const f = formatEval(outcome, handle.info, {
        description: label,
        notes: note ? [...notes, note] : notes,
        idleTimeoutMs: runner.idleTimeoutMs,
        ...(privateTo ? { privateTo } : {})
      });
      return {
        title: f.title,
        output: f.output,
        display: f.display,
        attachments: f.images.map((i) => ({ type: 'image' as const, mediaType: i.mediaType, data: i.data })),
        metadata: {
          status: outcome.status,
          kernel: handle.info,
          executionCount: outcome.executionCount,
          bridgeCalls: outcome.bridgeCalls
        }
      };
    }
  });
}

/**
 * The `shell` judgement of a cell whose syntax tree calls process-spawning, deleting or
 * dynamic-code APIs (EVAL-5): the same shell rules and dangerous-command floor as the
 * shell tool, so `eval` being allowed does not allow `os.system("rm -rf …")`. None for
 * a cell without such calls.
 */
export function shellJudgement(code: string, language: 'python' | 'javascript'): ExtraJudgement[] {
  const calls = findProcessCalls(code, language);
  if (calls.length === 0) return [];
  const subjects = [
    ...new Set(calls.flatMap((c) => (c.subject.startsWith(`${language}: `) ? [c.subject] : shellSubjects(c.subject))))
  ];
  const danger = calls.map((c) => dangerousCommandReason(c.subject)).find((d) => d !== undefined);
  const apis = [...new Set(calls.map((c) => c.api))].join(', ');
  return [{ tool: 'shell', tier: 'exec', subjects, ...(danger ? { danger } : {}), why: `the cell calls ${apis}` }];
}
