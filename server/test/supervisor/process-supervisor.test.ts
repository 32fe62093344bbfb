/**
 * ProcessSupervisor (issue #10 item 2, LSP-5; the DAP client reuses it) with real child
 * processes: a stdio JSON-RPC fixture server (fixtures/framed-server.mjs) spoken to through
 * the shared framing (it prints a banner before its first frame). kill -9 → restarted and
 * answering; a command that cannot start → one spawn, then a cached error naming why and
 * when it retries; dispose/idle → nothing left in the process group; secrets scrubbed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMessageConnection, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/config/logger.js';
import { createFramedReader, createFramedWriter } from '../../src/framing/index.js';
import {
  ProcessSupervisor,
  SupervisorError,
  type ExitEvent,
  type ProcessSupervisorOptions
} from '../../src/supervisor/index.js';
import { tempDir } from '../helpers/temp.js';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'framed-server.mjs');

interface Ping {
  pid: number;
  grandchild: number | null;
  secret: string | null;
  plain: string | null;
}
interface Client {
  connection: MessageConnection;
  ping(): Promise<Ping>;
}

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`)
  };
}

const supervisors: ProcessSupervisor<Client>[] = [];
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.dispose()));
});

function supervise(args: string[], options: Partial<ProcessSupervisorOptions<Client>> = {}) {
  const log = recordingLog();
  const supervisor = new ProcessSupervisor<Client>({
    name: 'fixture server',
    spawn: { command: process.execPath, args: [SERVER, ...args], cwd: path.dirname(SERVER) },
    log,
    connect: async (proc) => {
      const connection = createMessageConnection(
        createFramedReader(proc.stdout, { log: (l) => log.info(`[fixture stdout] ${l}`) }),
        createFramedWriter(proc.stdin)
      );
      connection.listen();
      const client: Client = { connection, ping: () => connection.sendRequest<Ping>('ping') };
      await client.ping();
      return client;
    },
    shutdown: async (client) => {
      await client.connection.sendRequest('shutdown');
      await client.connection.sendNotification('exit');
    },
    disposeClient: (client) => client.connection.dispose(),
    backoffInitialMs: 50,
    ...options
  });
  supervisors.push(supervisor);
  return { supervisor, log };
}

/** Pids whose process group is `pgid` (Linux /proc). */
function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const nextExit = (s: ProcessSupervisor<Client>) =>
  new Promise<ExitEvent>((resolve) => {
    const d = s.onDidExit((e) => {
      d.dispose();
      resolve(e);
    });
  });

describe('ProcessSupervisor', () => {
  it('starts lazily in its own process group; the banner and stderr go to the log; dispose leaves nothing in the group', async () => {
    const { supervisor, log } = supervise(['--grandchild']);
    expect(supervisor.status().state).toBe('stopped');
    const client = await supervisor.get();
    const ping = await client.ping();
    expect(supervisor.status()).toMatchObject({ state: 'running', pid: ping.pid, restarts: 0 });
    // Its own group, shared with what it started.
    expect(groupMembers(ping.pid).sort()).toEqual([ping.pid, ping.grandchild!].sort());
    expect(groupMembers(process.pid)).not.toContain(ping.pid);
    expect(log.lines).toContain(
      'info [fixture stdout] skipped output that is not a frame (byte 0): fixture server 1.0 starting (banner on stdout)'
    );
    expect(log.lines).toContain('info [fixture server] fixture: listening on stdio');
    await supervisor.dispose();
    expect(groupMembers(ping.pid)).toEqual([]);
    expect(alive(ping.grandchild!)).toBe(false);
    await expect(supervisor.get()).rejects.toMatchObject({ code: 'disposed' });
  });

  it('kill -9 of the server: the crash is logged, it is restarted after the backoff and the next call answers', async () => {
    const { supervisor, log } = supervise(['--grandchild']);
    const first = await (await supervisor.get()).ping();
    const exit = nextExit(supervisor);
    process.kill(first.pid, 'SIGKILL');
    expect(await exit).toMatchObject({ pid: first.pid, signal: 'SIGKILL', expected: false });
    const second = await (await supervisor.get()).ping();
    expect(second.pid).not.toBe(first.pid);
    expect(supervisor.status()).toMatchObject({ state: 'running', restarts: 1, lastExit: { signal: 'SIGKILL' } });
    // The orphaned worker of the killed server went with its group.
    expect(alive(first.grandchild!)).toBe(false);
    expect(
      log.lines.some(
        (l) =>
          l.startsWith(`warn fixture server (pid ${first.pid}) exited unexpectedly with signal SIGKILL`) &&
          l.includes('restarting in 50 ms')
      )
    ).toBe(true);
  });

  it('a server that cannot start is spawned once: later calls get the cached error (why, stderr, when it retries) until the retry time', async () => {
    const dir = await tempDir();
    const count = path.join(dir, 'starts');
    const { supervisor } = supervise(['--crash', '3', '--count', count], {
      failedStartRetryMs: 400,
      retryHint: 'reload retries now'
    });
    const first = await supervisor.get().catch((e: unknown) => e);
    expect(first).toBeInstanceOf(SupervisorError);
    expect((first as SupervisorError).message).toMatch(
      /^fixture server failed to start: it exited during start-up \(exit code 3\)\. Its stderr ended with: "fixture: loading configuration ⏎ boom: no configuration found in this folder" It is not started again until \d\d:\d\d:\d\d UTC \(in 1 s\); reload retries now\.$/
    );
    for (let i = 0; i < 5; i++) await expect(supervisor.get()).rejects.toMatchObject({ code: 'start-failed' });
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(supervisor.status()).toMatchObject({
      state: 'failed',
      failure: { message: expect.stringContaining('exit code 3') }
    });
    // After the retry time, one more attempt.
    await new Promise((r) => setTimeout(r, (first as SupervisorError).retryAt! - Date.now() + 20));
    await expect(supervisor.get()).rejects.toMatchObject({ code: 'start-failed' });
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(2);
    // reload retries at once.
    await expect(supervisor.reload()).rejects.toMatchObject({ code: 'start-failed' });
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('a missing executable: a start-failed error that says the executable was not found', async () => {
    const log = recordingLog();
    const supervisor = new ProcessSupervisor<Client>({
      name: 'ghost-langserver',
      spawn: { command: 'cellmate-no-such-langserver', args: ['--stdio'], cwd: process.cwd() },
      log,
      connect: () => Promise.reject(new Error('unreachable'))
    });
    const error = (await supervisor.get().catch((e: unknown) => e)) as SupervisorError;
    expect(error.code).toBe('start-failed');
    expect(error.message).toContain(
      'ghost-langserver could not be started: the executable "cellmate-no-such-langserver" was not found'
    );
    expect(log.lines.filter((l) => l.startsWith('warn'))).toHaveLength(1);
    await supervisor.dispose();
  });

  it('a server that keeps crashing after start becomes a failed start after maxCrashes', async () => {
    const dir = await tempDir();
    const count = path.join(dir, 'starts');
    const { supervisor } = supervise(['--exit-after', '100', '--count', count], { maxCrashes: 3 });
    await supervisor.get();
    const failed = new Promise<void>((resolve) => {
      const d = supervisor.onDidExit(() => {
        if (supervisor.status().state === 'failed') {
          d.dispose();
          resolve();
        }
      });
    });
    await failed;
    const error = (await supervisor.get().catch((e: unknown) => e)) as SupervisorError;
    expect(error.message).toMatch(
      /exited unexpectedly with exit code 7 after .* It crashed 3 times in a row\. It is not started again until/
    );
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('idle eviction stops the whole group after idleMs without a call; a hold() prevents it; the next call starts it again', async () => {
    const { supervisor } = supervise(['--grandchild'], { idleMs: 150 });
    const held = supervisor.hold();
    const first = await (await supervisor.get()).ping();
    await new Promise((r) => setTimeout(r, 600));
    expect(supervisor.status().state).toBe('running');
    const exit = nextExit(supervisor);
    held.dispose();
    expect(await exit).toMatchObject({ pid: first.pid, expected: true });
    expect(supervisor.status()).toMatchObject({ state: 'stopped', restarts: 0 });
    expect(groupMembers(first.pid)).toEqual([]);
    const second = await (await supervisor.get()).ping();
    expect(second.pid).not.toBe(first.pid);
  });

  it('the child environment is scrubbed (security/child-env.ts): secrets out, the rest in', async () => {
    process.env.CELLMATE_TEST_SECRET_TOKEN = 'hunter2';
    process.env.CELLMATE_TEST_PLAIN = 'visible';
    try {
      const { supervisor } = supervise([]);
      expect(await (await supervisor.get()).ping()).toMatchObject({ secret: null, plain: 'visible' });
    } finally {
      delete process.env.CELLMATE_TEST_SECRET_TOKEN;
      delete process.env.CELLMATE_TEST_PLAIN;
    }
  });

  it('concurrent first calls share one start; reload() replaces the process', async () => {
    const dir = await tempDir();
    const count = path.join(dir, 'starts');
    const { supervisor } = supervise(['--count', count]);
    const clients = await Promise.all([supervisor.get(), supervisor.get(), supervisor.get()]);
    expect(new Set(clients).size).toBe(1);
    const before = await clients[0]!.ping();
    const after = await (await supervisor.reload()).ping();
    expect(after.pid).not.toBe(before.pid);
    expect(alive(before.pid)).toBe(false);
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(supervisor.status().restarts).toBe(0);
  });
});
