/**
 * A chat as files a data scientist keeps: Markdown (the conversation, every tool call with
 * its arguments and result, figures as image files beside it) and a runnable notebook (the
 * agent's eval cells as code cells with their outputs, the conversation as markdown cells).
 *
 * The transcript is the source, so what the person saw is what is exported. Two choices the
 * transcript forces, said here rather than hidden: an eval card keeps a stream's text and a
 * result's `text/plain` alike, so a plain-text output ending in a newline becomes a stdout
 * stream and one without becomes an `execute_result`; and the notebook's kernel is Python —
 * JavaScript eval cells (another kernel) are kept as markdown code blocks, not code cells.
 * HTML outputs are never inlined into the Markdown (they are untrusted markup): they are
 * saved as `.html` files and linked. Pure: {@link renderExport} returns the files to write.
 */
import type { Chat, EvalDisplay, ToolCallItem } from '@cellmate/protocol';

/** The files of one export, paths relative to the export's folder. */
export interface ExportFiles {
  markdown: string;
  notebook: string;
  /** Figures and HTML outputs: relative path → content (base64 for binary). */
  assets: Array<{ path: string; content: string; encoding: 'base64' | 'utf8' }>;
}

/** Characters of a non-eval tool result kept in the Markdown (the journal keeps all of it). */
const MAX_RESULT_CHARS = 4000;

interface NotebookOutput {
  output_type: string;
  [key: string]: unknown;
}

/** Renders `chat` for the files `<base>.md`, `<base>.ipynb` and the folder `<base>_files/`. */
export function renderExport(chat: Chat, base: string, exportedAt: string): ExportFiles {
  const md: string[] = [
    `# ${oneLine(chat.title)}`,
    '',
    `_Exported from Cellmate on ${exportedAt}. Chat \`${chat.id}\`, mode ${chat.mode}._`
  ];
  const cells: Array<Record<string, unknown>> = [];
  const assets: ExportFiles['assets'] = [];
  let figure = 0;
  let cellNo = 0;
  const asset = (ext: string, content: string, encoding: 'base64' | 'utf8'): string => {
    figure++;
    const rel = `${base}_files/output-${figure}.${ext}`;
    assets.push({ path: rel, content, encoding });
    return rel;
  };
  const markdownCell = (text: string): void => {
    cells.push({ cell_type: 'markdown', id: `md-${++cellNo}`, metadata: {}, source: text });
  };

  for (const item of chat.items) {
    switch (item.kind) {
      case 'user':
        md.push('', '## You', '', item.text);
        markdownCell(`**You:** ${item.text}`);
        break;
      case 'assistant':
        if (!item.text.trim()) break;
        md.push('', '## Cellmate', '', item.text);
        markdownCell(item.text);
        break;
      case 'tool':
        md.push('', ...toolMarkdown(item, asset));
        if (isPythonEval(item)) cells.push(codeCell(item, ++cellNo));
        else markdownCell(toolNote(item));
        break;
      case 'notice':
        md.push('', `> ${item.level}: ${item.text.replace(/\n/g, '\n> ')}`);
        break;
      default:
        break; // questions, usage lines and compaction cards are about the session, not the analysis
    }
  }
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
      language_info: { name: 'python' },
      cellmate: { chat: chat.id, title: chat.title, exported: exportedAt }
    },
    cells
  };
  return { markdown: `${md.join('\n')}\n`, notebook: `${JSON.stringify(notebook, null, 1)}\n`, assets };
}

function isPythonEval(item: ToolCallItem): boolean {
  const args = item.args as { code?: unknown; language?: unknown } | undefined;
  return (
    item.name === 'eval' &&
    typeof args?.code === 'string' &&
    (args.language === undefined || args.language === 'python')
  );
}

function toolNote(item: ToolCallItem): string {
  const args = item.args as { code?: unknown; language?: unknown } | undefined;
  if (item.name === 'eval' && typeof args?.code === 'string') {
    return `JavaScript cell run by Cellmate (not runnable in this Python notebook):\n\n${fence(args.code, 'javascript')}`;
  }
  return `*Cellmate used \`${item.name}\`${item.title ? `: ${oneLine(item.title)}` : ''} (${item.status}).*`;
}

function codeCell(item: ToolCallItem, n: number): Record<string, unknown> {
  const args = item.args as { code: string; description?: string };
  const outputs: NotebookOutput[] = [];
  const display = item.display?.kind === 'eval' ? (item.display as EvalDisplay) : undefined;
  for (const bundle of display?.outputs ?? []) outputs.push(notebookOutput(bundle));
  return {
    cell_type: 'code',
    id: `eval-${n}`,
    execution_count: null,
    metadata: { cellmate: { description: args.description ?? '', call: item.callId } },
    source: args.code,
    outputs
  };
}

function notebookOutput(bundle: Record<string, string>): NotebookOutput {
  const keys = Object.keys(bundle);
  const stderr = bundle['application/vnd.jupyter.stderr'];
  if (stderr !== undefined) return { output_type: 'stream', name: 'stderr', text: stderr };
  const plain = bundle['text/plain'];
  if (keys.length === 1 && plain !== undefined) {
    return plain.endsWith('\n')
      ? { output_type: 'stream', name: 'stdout', text: plain }
      : { output_type: 'execute_result', execution_count: null, metadata: {}, data: { 'text/plain': plain } };
  }
  return { output_type: 'display_data', metadata: {}, data: { ...bundle } };
}

function toolMarkdown(
  item: ToolCallItem,
  asset: (ext: string, content: string, encoding: 'base64' | 'utf8') => string
): string[] {
  const out: string[] = [
    `**Tool \`${item.name}\`**${item.title ? ` — ${oneLine(item.title)}` : ''} (${item.status}${item.durationMs !== undefined ? `, ${item.durationMs} ms` : ''})`
  ];
  const args = item.args as { code?: unknown; language?: unknown; description?: unknown } | undefined;
  if (item.name === 'eval' && typeof args?.code === 'string') {
    if (typeof args.description === 'string') out.push('', `_${oneLine(args.description)}_`);
    out.push('', fence(args.code, args.language === 'javascript' ? 'javascript' : 'python'));
    const display = item.display?.kind === 'eval' ? (item.display as EvalDisplay) : undefined;
    for (const bundle of display?.outputs ?? []) {
      const image = ['image/png', 'image/jpeg'].find((m) => bundle[m] !== undefined);
      if (image) {
        const rel = asset(image === 'image/png' ? 'png' : 'jpg', bundle[image]!.replace(/\s+/g, ''), 'base64');
        out.push('', `![figure](${encodeURI(rel)})`);
      } else if (bundle['text/html'] !== undefined && bundle['text/plain'] === undefined) {
        const rel = asset('html', bundle['text/html'], 'utf8');
        out.push('', `[HTML output](${encodeURI(rel)})`);
      } else {
        const text = bundle['application/vnd.jupyter.stderr'] ?? bundle['text/plain'];
        if (text !== undefined)
          out.push(
            '',
            fence(text.replace(/\n$/, ''), bundle['application/vnd.jupyter.stderr'] !== undefined ? 'stderr' : 'text')
          );
        if (bundle['text/html'] !== undefined)
          out.push('', `[HTML output](${encodeURI(asset('html', bundle['text/html'], 'utf8'))})`);
      }
    }
    return out;
  }
  out.push('', fence(JSON.stringify(item.args ?? {}, null, 2), 'json'));
  if (item.output !== undefined) {
    const text =
      item.output.length > MAX_RESULT_CHARS
        ? `${item.output.slice(0, MAX_RESULT_CHARS)}\n[… ${item.output.length - MAX_RESULT_CHARS} more characters in the chat's journal]`
        : item.output;
    out.push('', '<details><summary>Result</summary>', '', fence(text, 'text'), '', '</details>');
  }
  return out;
}

/** A code fence longer than any run of backticks inside. */
function fence(text: string, info: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${info}\n${text}\n${ticks}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A file-name stem from a chat title: letters, digits and hyphens. */
export function exportStem(title: string, at: Date): string {
  const slug =
    title
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'chat';
  const stamp = at.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return `${slug}-${stamp}`;
}
