import { ErrorCodes, PROTOCOL_VERSION, type ChatEvent } from '@cellmate/protocol';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const mainJs = path.join(serverDir, 'dist', 'main.js');

/**
 * The e2e test runs the built server, so build it first (incremental: fast when up to
 * date). A build failure fails the suite with tsc's output.
 */
beforeAll(() => {
  const repoRoot = path.resolve(serverDir, '..');
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = spawnSync(process.execPath, [tsc, '-b', 'server'], { cwd: repoRoot, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`"tsc -b server" failed:\n${build.stdout}${build.stderr}`);
  if (!statSync(mainJs, { throwIfNoEntry: false })) throw new Error(`${mainJs} missing after build`);
}, 120_000);

let child: ChildProcess | undefined;
const clients: TestClient[] = [];
afterEach(async () => {
  clients.splice(0).forEach((c) => c.close());
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  child = undefined;
});

async function startMain(
  ws: string,
  socketPath: string
): Promise<{ proc: ChildProcess; readyLine: string; stderr: () => string }> {
  const proc = spawn(process.execPath, [mainJs, '--socket', socketPath, '--workspace', ws], {
    cwd: ws,
    env: { PATH: process.env.PATH, HOME: ws, CELLMATE_CONFIG: path.join(ws, 'none.json') },
    stdio: ['ignore', 'pipe', 'pipe']
  });
  child = proc;
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let out = '';
  const readyLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no CELLMATE_READY within 20 s; stderr:\n${err}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    proc.once('exit', (code) => reject(new Error(`server exited (${code}) before ready; stderr:\n${err}`)));
  });
  return { proc, readyLine, stderr: () => err };
}

/** Socket inodes the process holds, from /proc/<pid>/fd. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]!);
  }
  return inodes;
}

/** TCP sockets (v4+v6) owned by the process: [state, inode] pairs (state 0A = LISTEN). */
function tcpSocketsOf(pid: number): Array<{ state: string; inode: string }> {
  const mine = socketInodes(pid);
  const rows: Array<{ state: string; inode: string }> = [];
  for (const table of ['tcp', 'tcp6']) {
    const text = (() => {
      try {
        return readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
      } catch {
        return '';
      }
    })();
    for (const line of text.trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const state = cols[3]!;
      const inode = cols[9]!;
      if (mine.has(inode)) rows.push({ state, inode });
    }
  }
  return rows;
}

describe('main.js over a real Unix socket', () => {
  it('announces readiness, serves JSON-RPC, streams events in order, opens no TCP socket, exits on SIGTERM', async () => {
    const root = await tempDir();
    const ws = path.join(root, 'ws');
    const runDir = path.join(root, 'run');
    await mkdir(ws);
    await mkdir(runDir, { mode: 0o700 });
    await writeFile(path.join(ws, 'notes.md'), 'one\ntwo\n');
    await writeFile(
      path.join(ws, 'script.json'),
      JSON.stringify({
        steps: [
          { text: 'Reading notes.', toolCalls: [{ toolName: 'read', input: { path: 'notes.md' } }], chunkDelayMs: 1 },
          { text: 'Done: two lines.', chunkDelayMs: 1 }
        ]
      })
    );
    const socketPath = path.join(runDir, 'cellmate.sock');
    const { proc, readyLine } = await startMain(ws, socketPath);
    expect(readyLine).toBe(`CELLMATE_READY ${socketPath}\n`);
    expect((await stat(socketPath)).mode & 0o777).toBe(0o600);

    const a = await connectClient(socketPath);
    const b = await connectClient(socketPath);
    clients.push(a, b);
    const hello = await sendRequest(a.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION });
    expect(hello).toMatchObject({ protocolVersion: PROTOCOL_VERSION, workspace: ws });
    expect(hello.providers.map((p) => p.kind)).toEqual(['openai', 'anthropic', 'openai-compatible', 'scripted']);
    await expect(sendRequest(a.connection, 'cellmate/hello', { protocolVersion: 999 })).rejects.toMatchObject({
      code: ErrorCodes.ProtocolMismatch
    });

    const chat = await sendRequest(a.connection, 'chat/create', {});
    expect(chat).toMatchObject({ title: 'New chat', mode: 'agent', items: [], running: false });
    const { turnId } = await sendRequest(a.connection, 'chat/send', {
      chatId: chat.id,
      text: 'Count the lines of notes.md',
      model: { provider: 'scripted', model: 'scripted', scriptPath: 'script.json' }
    });
    // The client that started the turn leaves; the turn keeps running and b sees it end.
    a.close();
    const ended = await b.turnEnded(chat.id);
    expect(ended).toEqual({ type: 'turn-ended', turnId, reason: 'stop' });

    const seq = b.events.filter((e) => e.chatId === chat.id).map((e) => e.event);
    const shape = compress(seq);
    expect(shape).toEqual([
      'turn-started',
      'item-added:user',
      'item-added:assistant',
      'text-delta*',
      'item-updated:assistant',
      // After each step the context meter's figures (CTX-1): the scripted model reports no usage, so Cellmate's estimate.
      'item-added:tool',
      'context',
      'item-updated:tool',
      'item-added:assistant',
      'text-delta*',
      'item-updated:assistant',
      'context',
      'turn-ended'
    ]);
    expect(b.lists.at(-1)?.[0]).toMatchObject({ id: chat.id, title: 'Count the lines of notes.md' });

    const stored = await sendRequest(b.connection, 'chat/get', { chatId: chat.id });
    expect(stored.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Done: two lines.' });
    expect(stored.items.find((i) => i.kind === 'tool')).toMatchObject({
      status: 'ok',
      output: '     1\tone\n     2\ttwo'
    });

    // Typed errors.
    await expect(sendRequest(b.connection, 'chat/get', { chatId: 'no-such-chat' })).rejects.toMatchObject({
      code: ErrorCodes.ChatNotFound,
      message: expect.stringContaining('Call chat/list')
    });
    await expect(
      sendRequest(b.connection, 'chat/send', { chatId: chat.id, text: '', model: { provider: 'scripted', model: '' } })
    ).rejects.toMatchObject({ code: -32602 });
    await expect(b.connection.sendRequest('chat/unknown', {})).rejects.toMatchObject({ code: -32601 });

    // No TCP socket at all, listening or not; the Unix socket is there (positive control).
    const pid = proc.pid!;
    expect(socketInodes(pid).size).toBeGreaterThan(0);
    expect(tcpSocketsOf(pid)).toEqual([]);
    const unixTable = readFileSync(`/proc/${pid}/net/unix`, 'utf8');
    expect(unixTable).toContain(socketPath);

    // SIGTERM: clean exit, socket removed, chat flushed.
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(stat(socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(path.join(ws, '.cellmate', 'chats'))).toEqual([`${chat.id}.jsonl`]);
  });

  it('refuses to start when the socket is held by a live server', async () => {
    const root = await tempDir();
    const socketPath = path.join(root, 's.sock');
    await startMain(root, socketPath);
    const second = spawn(process.execPath, [mainJs, '--socket', socketPath, '--workspace', root], {
      stdio: ['ignore', 'pipe', 'pipe']
    });
    let err = '';
    second.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain('Another server is already listening');
  });

  it('prints usage and exits 2 on bad arguments', async () => {
    const proc = spawn(process.execPath, [mainJs, '--workspace', '/tmp'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    expect(code).toBe(2);
    expect(err).toContain('one of --socket <path> or --stdio is required');
  });
});

/** Event types with item kinds; runs of text-delta collapse to `text-delta*`. */
function compress(events: ChatEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const label =
      e.type === 'item-added' || e.type === 'item-updated'
        ? `${e.type}:${e.item.kind}`
        : e.type === 'text-delta'
          ? 'text-delta*'
          : e.type;
    if (label === 'text-delta*' && out.at(-1) === label) continue;
    out.push(label);
  }
  return out;
}
