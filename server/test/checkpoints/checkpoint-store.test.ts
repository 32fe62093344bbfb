/**
 * Checkpoints and rewind (HARN-6, EDIT-2) on real temporary folders,
 * through the chat service, the real registry and the real write tools, with the scripted
 * model: each turn's writes keep what was there before (at the one write path, not per
 * tool), bounded; "Undo this turn's changes" and "Rewind to here" across several turns
 * restore bytes exactly, remove what a turn created, and never overwrite a file the person
 * changed afterwards unless told to.
 */
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCodes, type UserItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { assignedNames } from '../../src/checkpoints/assigned-names.js';
import { CheckpointStore, type CheckpointLimits } from '../../src/checkpoints/checkpoint-store.js';
import { builtinTools, ToolRegistry } from '../../src/tools/index.js';
import { createNotebookTools } from '../../src/tools/notebook/notebook.js';
import { PaneHub } from '../../src/notebooks/pane-hub.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const NOTEBOOK =
  JSON.stringify(
    {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { kernelspec: { name: 'python3', language: 'python' } },
      cells: [
        {
          cell_type: 'code',
          id: 'c1',
          metadata: {},
          source: ['x = 1\n', 'print(x)'],
          outputs: [{ output_type: 'stream', name: 'stdout', text: ['1\n'] }],
          execution_count: 3
        },
        { cell_type: 'markdown', id: 'm1', metadata: {}, source: ['# notes'] }
      ]
    },
    null,
    1
  ) + '\n';

async function rig(limits?: Partial<CheckpointLimits>) {
  const ws = await tempDir();
  await writeFile(path.join(ws, 'b.txt'), 'b original\n');
  await writeFile(path.join(ws, 'nb.ipynb'), NOTEBOOK);
  // Not UTF-8: kept and restored as bytes.
  await writeFile(path.join(ws, 'bin.dat'), Buffer.from([0xff, 0x00, 0xfe, 0x0a]));
  const checkpoints = new CheckpointStore({
    directory: path.join(ws, '.cellmate', 'chats', 'checkpoints'),
    ...(limits ? { limits } : {})
  });
  const port = new PaneHub();
  const registry = new ToolRegistry([...builtinTools(), ...createNotebookTools({ port })], { checkpoints });
  const h = await createHarness(ws, { registry });
  // The service's rewind needs the store and the port the tools write through.
  Object.assign((h.service as unknown as { options: object }).options, { checkpoints, notebookPort: port });
  return { ws, h, checkpoints };
}

const write = (p: string, content: string) => ({
  toolCalls: [{ toolName: 'write', input: { path: p, content } }],
  chunkDelayMs: 0
});
const edit = (p: string, oldString: string, newString: string) => ({
  toolCalls: [{ toolName: 'edit', input: { path: p, old_string: oldString, new_string: newString } }],
  chunkDelayMs: 0
});
const done = { text: 'done', chunkDelayMs: 0 };

async function read(ws: string, p: string): Promise<string | null> {
  return readFile(path.join(ws, p), 'utf8').catch(() => null);
}

describe('checkpoints and rewind', () => {
  it('HARN-6 EDIT-2: each turn keeps what it changed; undoing the last turn and rewinding across three turns restore bytes exactly', async () => {
    const { ws, h, checkpoints } = await rig();
    const model = await scriptSettings(ws, {
      turns: [
        [write('a.txt', 'new file\n'), edit('b.txt', 'b original', 'b turn one'), done],
        [edit('b.txt', 'b turn one', 'b turn two'), write('sub/c.txt', 'c\n'), done],
        [
          {
            toolCalls: [
              {
                toolName: 'notebook_edit',
                input: { path: 'nb.ipynb', edits: [{ action: 'replace', cell_id: 'c1', source: 'y = 2\nprint(y)' }] }
              }
            ],
            chunkDelayMs: 0
          },
          write('bin.dat', 'text now'),
          done
        ],
        [done]
      ]
    });
    const chat = h.service.create();
    for (const text of ['one', 'two', 'three', 'no changes']) await h.sendAndWait(chat.id, text, model);
    const users = h.service.get(chat.id).items.filter((i): i is UserItem => i.kind === 'user');
    // A turn that wrote nothing has no checkpoint; the others list what they changed.
    expect(checkpoints.list(chat.id).map((t) => [t.turnId, t.paths.sort()])).toEqual([
      [users[0]!.turnId, ['a.txt', 'b.txt']],
      [users[1]!.turnId, ['b.txt', 'sub/c.txt']],
      [users[2]!.turnId, ['bin.dat', 'nb.ipynb']]
    ]);
    expect(await read(ws, 'b.txt')).toBe('b turn two\n');

    // Undo the second turn only: b.txt back to what turn one left, c.txt (created) removed.
    const preview = await h.service.rewindPreview({ chatId: chat.id, itemId: users[1]!.id, scope: 'turn' });
    expect(preview.files.map((f) => [f.path, f.action])).toEqual([
      ['b.txt', 'restore'],
      ['sub/c.txt', 'remove']
    ]);
    expect(preview.files[0]!.diff).toContain('-b turn two');
    expect(preview.files[0]!.diff).toContain('+b turn one');
    const undone = await h.service.rewind({ chatId: chat.id, itemId: users[1]!.id, scope: 'turn' });
    expect(undone.restored.sort()).toEqual(['b.txt', 'sub/c.txt']);
    expect(await read(ws, 'b.txt')).toBe('b turn one\n');
    expect(await read(ws, 'sub/c.txt')).toBeNull();
    // The undone turn's checkpoint is used up; the others stay.
    expect(checkpoints.list(chat.id).map((t) => t.turnId)).toEqual([users[0]!.turnId, users[2]!.turnId]);

    // Rewind to the first message: every turn from it on, each path to its oldest content.
    const all = await h.service.rewindPreview({ chatId: chat.id, itemId: users[0]!.id, scope: 'from' });
    expect(all.files.map((f) => [f.path, f.action]).sort()).toEqual([
      ['a.txt', 'remove'],
      ['b.txt', 'restore'],
      ['bin.dat', 'restore'],
      ['nb.ipynb', 'restore']
    ]);
    // The notebook's diff is per cell, outputs noted.
    const nb = all.files.find((f) => f.path === 'nb.ipynb')!;
    expect(nb.cells?.[0]).toMatchObject({ id: 'c1', note: 'outputs restored' });
    expect(nb.cells?.[0]?.diff).toContain('+x = 1');
    const result = await h.service.rewind({ chatId: chat.id, itemId: users[0]!.id, scope: 'from' });
    expect(result.skipped).toEqual([]);
    expect(await read(ws, 'a.txt')).toBeNull();
    expect(await read(ws, 'b.txt')).toBe('b original\n');
    expect(await read(ws, 'nb.ipynb')).toBe(NOTEBOOK);
    expect(await readFile(path.join(ws, 'bin.dat'))).toEqual(Buffer.from([0xff, 0x00, 0xfe, 0x0a]));
    // The transcript says what happened and that the kernel is not rewound.
    const last = h.service.get(chat.id).items.at(-1)!;
    expect(last).toMatchObject({ kind: 'notice' });
    expect((last as { text: string }).text).toMatch(/^Restored .*b\.txt.*kernel's state is not rewound/s);
    expect(checkpoints.list(chat.id)).toEqual([]);
    await h.dispose();
  });

  it('HARN-6: undoing a turn removes the folders it created for its files once they are empty, and nothing else', async () => {
    const { ws, h } = await rig();
    // Before the turn: a folder the person made, empty; another with a file of theirs.
    await mkdir(path.join(ws, 'empty'));
    await mkdir(path.join(ws, 'keep'));
    await writeFile(path.join(ws, 'keep', 'theirs.txt'), 'mine\n');
    const model = await scriptSettings(ws, {
      turns: [
        [
          write('notes/deep/summary.md', '# Summary\n'),
          write('out/report.md', 'report\n'),
          write('empty/y.txt', 'y\n'),
          write('keep/new/z.txt', 'z\n'),
          done
        ]
      ]
    });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'write them', model);
    // After the turn the person puts a file of their own in one of the folders it created.
    await writeFile(path.join(ws, 'out', 'mine.txt'), 'kept\n');
    const user = h.service.get(chat.id).items.find((i): i is UserItem => i.kind === 'user')!;
    const undone = await h.service.rewind({ chatId: chat.id, itemId: user.id, scope: 'turn' });
    expect(undone.restored.sort()).toEqual(['empty/y.txt', 'keep/new/z.txt', 'notes/deep/summary.md', 'out/report.md']);
    const isDir = (p: string) =>
      stat(path.join(ws, p)).then(
        (s) => s.isDirectory(),
        () => false
      );
    expect(await isDir('notes')).toBe(false);
    expect(await isDir('keep/new')).toBe(false);
    // What was there before the turn, or was put there since, stays.
    expect(await readdir(path.join(ws, 'empty'))).toEqual([]);
    expect(await readdir(path.join(ws, 'keep'))).toEqual(['theirs.txt']);
    expect(await readdir(path.join(ws, 'out'))).toEqual(['mine.txt']);
    await h.dispose();
  });

  it('HARN-6: a file the person changed after the agent is a conflict: shown, kept unless overwrite is asked for', async () => {
    const { ws, h } = await rig();
    const model = await scriptSettings(ws, {
      turns: [[write('a.txt', 'agent\n'), edit('b.txt', 'b original', 'b agent'), done]]
    });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'change', model);
    await writeFile(path.join(ws, 'b.txt'), 'b agent\nand my own line\n');
    const user = h.service.get(chat.id).items[0]!;
    const preview = await h.service.rewindPreview({ chatId: chat.id, itemId: user.id, scope: 'turn' });
    expect(preview.files.map((f) => [f.path, f.action])).toEqual([
      ['a.txt', 'remove'],
      ['b.txt', 'conflict']
    ]);
    expect(preview.files[1]!.why).toMatch(/changed after the agent changed it/);
    expect(preview.summary).toMatch(/1 changed since the agent's edit/);

    const kept = await h.service.rewind({ chatId: chat.id, itemId: user.id, scope: 'turn' });
    expect(kept).toMatchObject({ restored: ['a.txt'], skipped: ['b.txt'] });
    expect(await read(ws, 'b.txt')).toBe('b agent\nand my own line\n');
    expect(kept.message).toMatch(/Left as they are: b\.txt/);

    // Still offered (the conflict kept its checkpoint); now the person says overwrite.
    // A rewind names a user message of the chat; anything else is refused with the protocol's code.
    const assistant = h.service.get(chat.id).items.find((i) => i.kind === 'assistant')!;
    await expect(
      h.service.rewindPreview({ chatId: chat.id, itemId: assistant.id, scope: 'turn' })
    ).rejects.toMatchObject({ code: ErrorCodes.ItemNotFound });
    await expect(h.service.rewind({ chatId: chat.id, itemId: 'nope', scope: 'from' })).rejects.toMatchObject({
      code: ErrorCodes.ItemNotFound
    });

    const forced = await h.service.rewind({ chatId: chat.id, itemId: user.id, scope: 'turn', overwrite: true });
    expect(forced.restored).toEqual(['b.txt']);
    expect(await read(ws, 'b.txt')).toBe('b original\n');
    await h.dispose();
  });

  it('HARN-6: bounded — content over the per-file bound is not kept (the preview says it cannot be restored), and a chat over its bound loses its oldest turns', async () => {
    const big = 'x'.repeat(4000);
    const { ws, h, checkpoints } = await rig({ maxEntryBytes: 2000, maxChatBytes: 3000 });
    await writeFile(path.join(ws, 'big.txt'), big);
    const model = await scriptSettings(ws, {
      turns: [
        [write('big.txt', 'small now'), done],
        ...Array.from({ length: 6 }, (_, i) => [write(`f${i}.txt`, `${i}`.repeat(300)), done])
      ]
    });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'shrink big', model);
    const first = h.service.get(chat.id).items[0]!;
    const preview = await h.service.rewindPreview({ chatId: chat.id, itemId: first.id, scope: 'turn' });
    expect(preview.files).toEqual([
      expect.objectContaining({
        path: 'big.txt',
        action: 'unavailable',
        why: expect.stringMatching(/4000 bytes\) was too large to keep/)
      })
    ]);
    const result = await h.service.rewind({ chatId: chat.id, itemId: first.id, scope: 'turn' });
    expect(result.skipped).toEqual(['big.txt']);
    expect(await read(ws, 'big.txt')).toBe('small now');

    for (let i = 0; i < 6; i++) await h.sendAndWait(chat.id, `file ${i}`, model);
    const dir = path.join(ws, '.cellmate', 'chats', 'checkpoints', chat.id);
    const sizes = await Promise.all((await readdir(dir)).map(async (n) => (await stat(path.join(dir, n))).size));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3000);
    const kept = checkpoints.list(chat.id);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(7);
    // The newest turn is always kept; the oldest went first.
    expect(kept.at(-1)!.paths).toEqual(['f5.txt']);
    expect(kept.some((t) => t.paths.includes('big.txt'))).toBe(false);
    await h.dispose();
  });

  it('HARN-6: kept as it happens — one appended line per kept content; a line torn by a kill is skipped and the rest still restores', async () => {
    const { ws, h } = await rig();
    const model = await scriptSettings(ws, {
      turns: [
        [
          {
            toolCalls: [
              {
                toolName: 'apply_patch',
                input: { patch: '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b original\n+b patched\n' }
              }
            ],
            chunkDelayMs: 0
          },
          write('a.txt', 'a\n'),
          done
        ]
      ]
    });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'patch', model);
    const user = h.service.get(chat.id).items[0]!;
    const file = path.join(ws, '.cellmate', 'chats', 'checkpoints', chat.id, `${user.turnId}.jsonl`);
    // A header, then per path its content before and what each call left.
    expect(
      (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).t ?? 'header')
    ).toEqual(['header', 'before', 'after', 'before', 'after']);
    await writeFile(file, `${await readFile(file, 'utf8')}{"t":"before","path":"x.txt","sta`);
    const result = await h.service.rewind({ chatId: chat.id, itemId: user.id, scope: 'turn' });
    expect(result.restored.sort()).toEqual(['a.txt', 'b.txt']);
    expect(await read(ws, 'b.txt')).toBe('b original\n');
    expect(await read(ws, 'a.txt')).toBeNull();
    await h.dispose();
  });

  it('rewinding the conversation too removes the message and everything after it, and hands back its text', async () => {
    const { ws, h } = await rig();
    const model = await scriptSettings(ws, { turns: [[done], [write('a.txt', 'a\n'), done], [done]] });
    const chat = h.service.create();
    for (const text of ['hello', 'make a', 'thanks']) await h.sendAndWait(chat.id, text, model);
    const second = h.service.get(chat.id).items.filter((i) => i.kind === 'user')[1]!;
    const result = await h.service.rewind({ chatId: chat.id, itemId: second.id, scope: 'from', conversation: true });
    expect(result.text).toBe('make a');
    expect(await read(ws, 'a.txt')).toBeNull();
    const items = h.service.get(chat.id).items;
    expect(items.map((i) => i.kind)).toEqual(['user', 'assistant', 'notice']);
    expect(h.store.get(chat.id)!.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    await h.dispose();
  });

  it("HARN-5: a rewind refuses what a planted checkpoint names outside the workspace, or in Cellmate's own folder", async () => {
    const { ws, h, checkpoints } = await rig();
    const outside = await tempDir();
    await writeFile(path.join(outside, 'victim.txt'), 'keep me');
    const model = await scriptSettings(ws, { turns: [[write('a.txt', 'a'), done]] });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'go', model);
    const user = h.service.get(chat.id).items[0]!;
    const turn = checkpoints.get(chat.id, user.turnId)!;
    const policy = '{"rules": []}\n';
    await mkdir(path.join(ws, '.cellmate'), { recursive: true });
    await writeFile(path.join(ws, '.cellmate', 'policy.json'), policy);
    const keepMe = { kind: 'bytes' as const, base64: Buffer.from('keep me').toString('base64') };
    turn.entries.push({
      path: path.relative(ws, path.join(outside, 'victim.txt')),
      before: { kind: 'absent' },
      after: keepMe
    });
    turn.entries.push({
      path: '.cellmate/policy.json',
      before: { kind: 'absent' },
      after: { kind: 'bytes', base64: Buffer.from(policy).toString('base64') }
    });
    checkpoints.save(chat.id, turn);
    const preview = await h.service.rewindPreview({ chatId: chat.id, itemId: user.id, scope: 'turn' });
    expect(preview.files.map((f) => f.path)).toEqual(['a.txt']);
    const result = await h.service.rewind({ chatId: chat.id, itemId: user.id, scope: 'turn' });
    expect(result.restored).toEqual(['a.txt']);
    expect(await readFile(path.join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    expect(await readFile(path.join(ws, '.cellmate', 'policy.json'), 'utf8')).toBe(policy);
    await h.dispose();
  });

  it('names what undone Python cells bind at top level (the kernel keeps them)', async () => {
    expect(
      await assignedNames(
        'import pandas as pd\nfrom x import a, b as c\ndf = pd.read_csv("f")\nx, (y, z) = 1, (2, 3)\ndef top(): pass\nclass K: pass\nfor i in range(3):\n    total = i\n%matplotlib inline\nn += 1\nobj.attr = 5\n'
      )
    ).toEqual(['pd', 'a', 'c', 'df', 'x', 'y', 'z', 'top', 'K', 'i', 'total', 'n']);
  });
});
