/**
 * `/export` of a deterministic analysis chat: the real companion (startServer), a real
 * ipykernel, the scripted model. The Markdown has the conversation, each call and its
 * result, and the figure as a file beside it; the notebook validates with nbformat and,
 * run top to bottom in a fresh kernel (nbclient), gives the same outputs the chat showed.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { scriptSettings } from '../helpers/chat-harness.js';
import type { Chat } from '@cellmate/protocol';
import { exportStem, renderExport } from '../../src/chats/chat-export.js';
import { tempDir } from '../helpers/temp.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

/** The kernel's inline backend turns the shown figure into an image/png output, as in a notebook. */
const FIGURE = [
  'import matplotlib.pyplot as plt',
  'fig, ax = plt.subplots(figsize=(3, 2))',
  'ax.plot([0, 1, 2, 3], squares)',
  'plt.show()'
].join('\n');

const SCRIPT = {
  steps: [
    {
      text: 'Tabulating the squares.',
      chunkDelayMs: 0,
      toolCalls: [
        {
          toolName: 'eval',
          input: {
            description: 'Tabulate the first squares',
            code: 'squares = [i * i for i in range(4)]\nfor i, s in enumerate(squares):\n    print(i, s)'
          }
        }
      ]
    },
    {
      chunkDelayMs: 0,
      toolCalls: [{ toolName: 'eval', input: { description: 'Sum the squares', code: 'sum(squares)' } }]
    },
    {
      chunkDelayMs: 0,
      toolCalls: [
        { toolName: 'eval', input: { description: 'Plot the squares', code: FIGURE } },
        { toolName: 'read', input: { path: 'notes.md' } }
      ]
    },
    { text: 'The squares sum to **14**; the plot is above.', chunkDelayMs: 0 }
  ]
};

/** Validates the notebook, runs it in a fresh kernel, and prints each code cell's outputs before and after, normalised. */
const CHECK = `
import json, sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
def norm(cell):
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(["text", o.text])
        elif "image/png" in o.get("data", {}):
            out.append(["image/png", True])
        else:
            out.append(["text", o.get("data", {}).get("text/plain", "")])
    return out
before = [norm(c) for c in nb.cells if c.cell_type == "code"]
NotebookClient(nb, timeout=60, kernel_name="python3").execute()
after = [norm(c) for c in nb.cells if c.cell_type == "code"]
print(json.dumps({"before": before, "after": after}))
`;

let handle: ServerHandle | undefined;
afterEach(async () => {
  await handle?.dispose();
  handle = undefined;
});

describe('exporting a chat (issue #28 item 4)', () => {
  it('writes Markdown with the figure beside it and a notebook that validates and re-runs to the same outputs', async () => {
    const ws = await tempDir();
    await (
      await import('node:fs/promises')
    ).writeFile(path.join(ws, 'notes.md'), 'Squares are **fun**. ```fenced``` text.\n');
    const model = await scriptSettings(ws, SCRIPT);
    handle = await startServer({
      workspace: ws,
      stdio: { input: new PassThrough(), output: new PassThrough() },
      logger: silentLogger,
      maxRetries: 0,
      env: {
        PATH: process.env.PATH,
        HOME: ws,
        CELLMATE_CONFIG: path.join(ws, 'none.json'),
        CELLMATE_POLICY: path.join(ws, 'none-policy.json'),
        CELLMATE_PYTHON: PYTHON
      }
    });
    const chat = handle.service.create('Squares analysis');
    await handle.service.send({ chatId: chat.id, text: 'Tabulate and plot the first four squares.', settings: model });
    await handle.service.waitForTurn(chat.id);
    const tools = handle.service.get(chat.id).items.filter((i) => i.kind === 'tool');
    expect(tools.map((t) => (t.kind === 'tool' ? [t.name, t.status] : []))).toEqual([
      ['eval', 'ok'],
      ['eval', 'ok'],
      ['eval', 'ok'],
      ['read', 'ok']
    ]);

    const result = await handle.service.exportChat(chat.id);
    expect(result.markdown).toMatch(/^exports\/squares-analysis-\d{8}-\d{6}\.md$/);
    expect(result.notebook).toBe(result.markdown.replace(/\.md$/, '.ipynb'));
    expect(result.files).toHaveLength(1);
    const figure = path.join(ws, result.files[0]!);
    expect((await readFile(figure)).subarray(1, 4).toString()).toBe('PNG');
    expect((await stat(figure)).size).toBeGreaterThan(1000);

    const md = await readFile(path.join(ws, result.markdown), 'utf8');
    expect(md).toContain('# Squares analysis');
    expect(md).toContain('## You\n\nTabulate and plot the first four squares.');
    expect(md).toContain('## Cellmate\n\nThe squares sum to **14**; the plot is above.');
    expect(md).toContain('**Tool `eval`**');
    expect(md).toContain('```python\nsquares = [i * i for i in range(4)]');
    expect(md).toContain('```text\n0 0\n1 1\n2 4\n3 9\n```');
    expect(md).toContain(`![figure](${path.relative(path.join(ws, 'exports'), figure)})`);
    // A result holding a fence is fenced with a longer one, so it cannot end the block early.
    expect(md).toContain('````text\n');
    expect(md).toContain('**Tool `read`**');

    const { stdout } = await promisify(execFile)(PYTHON, ['-c', CHECK, path.join(ws, result.notebook)], {
      timeout: 120_000
    });
    const { before, after } = JSON.parse(stdout) as { before: unknown[]; after: unknown[] };
    expect(before).toEqual([[['text', '0 0\n1 1\n2 4\n3 9\n']], [['text', '14']], [['image/png', true]]]);
    expect(after).toEqual(before);
    const nb = JSON.parse(await readFile(path.join(ws, result.notebook), 'utf8')) as {
      cells: Array<{ cell_type: string; source: string }>;
    };
    expect(nb.cells.map((c) => c.cell_type)).toEqual([
      'markdown',
      'markdown',
      'code',
      'code',
      'code',
      'markdown',
      'markdown'
    ]);
    expect(await readdir(path.join(ws, 'exports'))).toHaveLength(3);
  }, 180_000);

  it('a hostile title cannot leave exports/, and HTML outputs are linked files, never inlined markup', () => {
    expect(exportStem('../../etc/passwd', new Date('2026-12-03T04:05:06Z'))).toBe('etc-passwd-20261203-040506');
    expect(exportStem('<img src=x>', new Date('2026-12-03T04:05:06Z'))).toBe('img-src-x-20261203-040506');
    const chat: Chat = {
      id: 'c1',
      title: 'T',
      mode: 'agent',
      createdAt: '',
      updatedAt: '',
      running: false,
      items: [
        {
          kind: 'tool',
          id: 'i1',
          time: '',
          turnId: 't',
          callId: 'k',
          name: 'eval',
          actor: 'model',
          status: 'ok',
          args: { code: 'display(HTML(x))', description: 'show html' },
          display: { kind: 'eval', outputs: [{ 'text/html': '<script>window.__pwned = 1</script>' }] }
        }
      ]
    };
    const files = renderExport(chat, 'stem', 'now');
    expect(files.markdown).not.toContain('<script');
    expect(files.markdown).toContain('[HTML output](stem_files/output-1.html)');
    expect(files.assets).toEqual([
      { path: 'stem_files/output-1.html', content: '<script>window.__pwned = 1</script>', encoding: 'utf8' }
    ]);
  });
});
