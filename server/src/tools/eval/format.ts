/**
 * What an eval returns: the text the model reads (in order: streams, values, rich
 * outputs as text, errors with their traceback), the images it may be handed, and
 * the MIME bundles the transcript card shows. Pure.
 */
import type { EvalOutcome } from '@cellmate/kernel-bridge';
import type { EvalKernelInfo, ToolCallDisplay } from '@cellmate/protocol';

/** A rich output bigger than this (characters over its MIME types) is not kept in the chat file. */
export const MAX_CARD_OUTPUT_CHARS = 4 * 2 ** 20;
/** MIME types the pane shows, best first. */
const SHOWN_MIMES = [
  'image/png',
  'image/jpeg',
  'image/svg+xml',
  'text/html',
  'text/markdown',
  'text/latex',
  'application/json',
  'text/plain'
];

export interface ModelImage {
  mediaType: string;
  /** Base64. */
  data: string;
}

export interface FormattedEval {
  title: string;
  output: string;
  images: ModelImage[];
  display: ToolCallDisplay;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
export const stripAnsi = (s: string): string => s.replace(ANSI, '');

/** Describes a kernel in one line, e.g. `python3 kernel of analysis.ipynb (shared with the notebook)`. */
export function describeKernel(k: EvalKernelInfo, privateTo = 'this chat'): string {
  return k.origin === 'notebook'
    ? `${k.name} kernel of ${k.notebookPath ?? 'the focused notebook'} (shared with the notebook, id ${k.id.slice(0, 8)})`
    : `${k.name} kernel private to ${privateTo}`;
}

export function formatEval(
  outcome: EvalOutcome,
  kernel: EvalKernelInfo,
  extra: {
    description: string;
    notes: string[];
    idleTimeoutMs: number;
    /** Whose private kernel (a background worker's), default this chat. */ privateTo?: string;
  }
): FormattedEval {
  const lines: string[] = [`[${kernel.language} · ${describeKernel(kernel, extra.privateTo)}]`];
  for (const n of [...extra.notes, ...outcome.notes]) lines.push(`Note: ${n}`);
  if (outcome.rewrites.length) {
    lines.push('Rewrote magics:');
    for (const r of outcome.rewrites) lines.push(`  ${r}`);
  }
  const images: ModelImage[] = [];
  const outputs: Array<Record<string, string>> = [];
  for (const o of outcome.outputs) {
    if (o.type === 'stream') {
      const text = stripAnsi(o.text);
      lines.push(o.name === 'stderr' ? `[stderr]\n${text.replace(/\n$/, '')}` : text.replace(/\n$/, ''));
      outputs.push(o.name === 'stderr' ? { 'application/vnd.jupyter.stderr': text } : { 'text/plain': text });
    } else if (o.type === 'display') {
      const bundle: Record<string, string> = {};
      for (const mime of SHOWN_MIMES) {
        const v = o.data[mime];
        if (v === undefined) continue;
        bundle[mime] =
          typeof v === 'string'
            ? v
            : Array.isArray(v) && v.every((x) => typeof x === 'string')
              ? v.join('')
              : JSON.stringify(v);
      }
      const size = Object.values(bundle).reduce((n, v) => n + v.length, 0);
      if (size > MAX_CARD_OUTPUT_CHARS) {
        outputs.push({ 'text/plain': `[output of ${(size / 2 ** 20).toFixed(1)} MB not kept in the transcript]` });
      } else if (Object.keys(bundle).length) outputs.push(bundle);
      const image = ['image/png', 'image/jpeg'].find((m) => typeof bundle[m] === 'string');
      if (image) {
        images.push({ mediaType: image, data: bundle[image]!.replace(/\s+/g, '') });
        lines.push(`[image ${images.length}: ${image}, shown to the user in the transcript]`);
      } else if (bundle['text/plain'] !== undefined) {
        lines.push(o.result ? `Out: ${stripAnsi(bundle['text/plain'])}` : stripAnsi(bundle['text/plain']));
      } else if (bundle['text/html'] !== undefined) {
        lines.push(`[HTML output, ${bundle['text/html'].length} characters, shown to the user]`);
      }
    } else {
      // The whole traceback: a long one is cut by the registry's head/tail shaping, which
      // keeps its end (where the error is) and saves the rest to a file (HARN-4).
      const tb = o.traceback.map(stripAnsi).join('\n');
      lines.push(`Error: ${o.ename}: ${stripAnsi(o.evalue)}`);
      if (tb) lines.push(`Traceback:\n${tb}`);
      outputs.push({ 'application/vnd.jupyter.stderr': `${o.ename}: ${stripAnsi(o.evalue)}${tb ? `\n${tb}` : ''}` });
    }
  }
  if (outcome.bridgeCalls > 0) {
    lines.push(
      `[${outcome.bridgeCalls} tool() call${outcome.bridgeCalls === 1 ? '' : 's'} from the cell, each checked and audited as actor "kernel"]`
    );
  }
  const secs = Math.round(extra.idleTimeoutMs / 1000);
  switch (outcome.status) {
    case 'idle-timeout':
      lines.push(
        `[Interrupted: no output for ${secs} s (the idle budget). The kernel and its state are kept. Print progress, or split the work.]`
      );
      break;
    case 'aborted':
      lines.push('[Interrupted: the user stopped the turn.]');
      break;
    case 'kernel-died':
      lines.push(
        '[The kernel died while running this cell (crash, out of memory, or killed). Its state is lost; the next eval starts a fresh kernel.]'
      );
      break;
    case 'stuck':
      lines.push(
        '[The cell did not stop after an interrupt; the kernel will be restarted on the next eval (state lost).]'
      );
      break;
    default:
      if (outcome.outputs.length === 0) lines.push('(no output)');
  }
  const statusWord = outcome.status === 'ok' ? '' : ` — ${outcome.status}`;
  return {
    title: `${extra.description}${statusWord}`,
    output: lines.join('\n'),
    images,
    display: { kind: 'eval', kernel, rewrites: outcome.rewrites, outputs }
  };
}
