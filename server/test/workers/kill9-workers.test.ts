/**
 * A companion killed (-9) while a worker runs (issue #16 item 5, SPEC §0 "a restart loses
 * nothing"): the built companion as Jupyter runs it, a real ipykernel. After the restart the
 * worker is `interrupted` — visible in `worker/list`, with its transcript — never silently
 * lost, and its kernel did not outlive the companion that started it.
 */
import type { TranscriptItem, WorkerSummary } from '@cellmate/protocol';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, startCompanion, type Companion } from '../helpers/companion.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(() => buildServer(), 120_000);

let companion: Companion | undefined;
let client: TestClient | undefined;
afterEach(async () => {
  client?.close();
  await companion?.kill9();
  companion = client = undefined;
});

describe.skipIf(!existsSync(PYTHON))('workers across a companion kill -9', () => {
  it('a running worker is interrupted after the restart, its transcript kept, its kernel gone with the old companion', async () => {
    const ws = await tempDir();
    const socket = path.join(ws, 's.sock');
    const worker = {
      steps: [
        {
          toolCalls: [
            {
              toolName: 'eval',
              input: {
                code: 'import os, time\nopen("worker.pid", "w").write(str(os.getpid()))\ntime.sleep(120)',
                description: 'note the pid, then sleep long'
              }
            }
          ],
          chunkDelayMs: 0
        }
      ]
    };
    const parent = {
      steps: [
        { toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Sleep long.', label: 'sleeper' } }], chunkDelayMs: 0 },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    await writeFile(path.join(ws, 'parent.json'), JSON.stringify(parent));
    await writeFile(path.join(ws, 'worker.json'), JSON.stringify(worker));
    await writeFile(
      path.join(ws, 'config.json'),
      JSON.stringify({ workers: { tiers: { fast: { provider: 'scripted', model: 'w', scriptPath: 'worker.json' } } } })
    );
    // The person's own policy file allows eval (a workspace's own allow rules need a trusted workspace).
    await writeFile(
      path.join(ws, 'home-policy.json'),
      JSON.stringify({ rules: [{ tool: 'eval', pattern: '*', action: 'allow' }] })
    );
    const env = {
      CELLMATE_CONFIG: path.join(ws, 'config.json'),
      CELLMATE_POLICY: path.join(ws, 'home-policy.json'),
      CELLMATE_PYTHON: PYTHON
    };

    companion = await startCompanion(ws, socket, env);
    client = await connectClient(socket);
    const request = <T>(method: string, params: unknown) =>
      client!.connection.sendRequest(method, params) as Promise<T>;
    await request('cellmate/hello', { protocolVersion: 1, interactive: true });
    const chat = await request<{ id: string }>('chat/create', {});
    await request('chat/send', {
      chatId: chat.id,
      text: 'go',
      model: { provider: 'scripted', model: 'p', scriptPath: 'parent.json' }
    });
    await client.turnEnded(chat.id);
    const pid = await until(
      'the worker kernel to write its pid',
      async () => Number(await readFile(path.join(ws, 'worker.pid'), 'utf8').catch(() => '')) || undefined
    );
    expect(alive(pid)).toBe(true);
    const [running] = await request<WorkerSummary[]>('worker/list', { chatId: chat.id });
    expect(running!.state).toBe('running');

    client.close();
    await companion.kill9();
    // The worker's kernel watches its parent (JPY_PARENT_PID) and goes with it: nothing leaks.
    await until('the worker kernel to exit', () => !alive(pid), 20_000);

    companion = await startCompanion(ws, socket, env);
    client = await connectClient(socket);
    await request('cellmate/hello', { protocolVersion: 1, interactive: true });
    const [after] = await request<WorkerSummary[]>('worker/list', { chatId: chat.id });
    expect(after).toMatchObject({ id: running!.id, label: 'sleeper', state: 'interrupted' });
    expect(after!.lastResult).toMatch(/^Interrupted: the companion restarted while this worker ran/);
    const { items } = await request<{ items: TranscriptItem[] }>('worker/get', {
      chatId: chat.id,
      workerId: running!.id
    });
    expect(items.map((i) => [i.kind, i.kind === 'tool' ? i.status : undefined])).toEqual([
      ['user', undefined],
      ['tool', 'aborted'],
      ['notice', undefined]
    ]);
    expect((items[2] as { text: string }).text).toBe('The companion server restarted; the turn was interrupted.');
  }, 120_000);
});
