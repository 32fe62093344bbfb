/**
 * Private kernels are bounded (issue #8 item 7): a cap with an error that names the chats
 * holding kernels, idle reaping (never of a busy kernel) with a note on the next eval,
 * and kernels that end when the companion process dies, even by SIGKILL. Real kernels.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KernelLimitError, KernelManager } from '../../src/kernels/kernel-manager.js';
import { tempDir } from '../helpers/temp.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const JS_MAIN = path.join(REPO, 'kernel-bridge', 'dist', 'js-kernel', 'main.js');
const pythonArgv = [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}'];
const jsArgv = [process.execPath, JS_MAIN, '-f', '{connection_file}'];

beforeAll(() => {
  const build = spawnSync(
    process.execPath,
    [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'server'],
    { cwd: REPO, encoding: 'utf8' }
  );
  if (build.status !== 0) throw new Error(`tsc -b server failed:\n${build.stdout}${build.stderr}`);
}, 120_000);

let managers: KernelManager[] = [];
afterEach(async () => {
  await Promise.all(managers.map((m) => m.dispose()));
  managers = [];
});

function manager(opts: Partial<ConstructorParameters<typeof KernelManager>[0]> & { workspace: string }): KernelManager {
  const m = new KernelManager({ pythonArgv, jsArgv, ...opts });
  managers.push(m);
  return m;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/State:\s+Z/.test(spawnSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' }).stdout);
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, limitMs = 20_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('private kernel bounds', () => {
  it('past the cap, acquire fails naming the chats (and titles) that hold kernels', async () => {
    const ws = await tempDir();
    const titles: Record<string, string> = { a: 'Sales analysis', b: 'Scratch' };
    const m = manager({ workspace: ws, maxPrivateKernels: 2, chatTitle: (id) => titles[id] });
    await m.acquire('a', 'javascript');
    await m.acquire('b', 'javascript');
    const third = m.acquire('c', 'javascript');
    await expect(third).rejects.toBeInstanceOf(KernelLimitError);
    const error = (await third.catch((e: unknown) => e)) as KernelLimitError;
    expect(error.message).toContain('"Sales analysis" (a): javascript');
    expect(error.message).toContain('"Scratch" (b): javascript');
    expect(error.message).toContain('CELLMATE_MAX_PRIVATE_KERNELS=2');
    expect(error.holders.map((h) => h.chatId)).toEqual(['a', 'b']);
    // The chats that have one keep using it.
    expect((await m.acquire('a', 'javascript')).notes).toEqual([]);
    // Deleting a chat frees its slot.
    await m.retainChats(new Set(['b']));
    await expect(m.acquire('c', 'javascript')).resolves.toBeTruthy();
  }, 60_000);

  it('an idle kernel is reaped (a busy one never), and the next eval says its state is gone', async () => {
    const ws = await tempDir();
    const m = manager({ workspace: ws, idleMs: 60 * 60_000 });
    const { handle } = await m.acquire('a', 'javascript');
    const pid = m.privateKernels()[0]!.pid!;
    const running = handle.session.run({
      code: 'await new Promise((r) => setTimeout(r, 1500)); 42',
      idleTimeoutMs: 30_000
    });
    await until('the eval to start', () => m.privateKernels()[0]?.busy === true);
    await m.reapIdle(Date.now() + 2 * 60 * 60_000); // far past the idle period, but busy
    expect(m.privateKernels()).toHaveLength(1);
    await running;
    await m.reapIdle(Date.now() + 2 * 60 * 60_000);
    expect(m.privateKernels()).toEqual([]);
    await until('the reaped kernel process to exit', () => !alive(pid));
    const again = await m.acquire('a', 'javascript');
    expect(again.notes.join(' ')).toContain('was stopped after 60 min without an eval');
  }, 60_000);

  it('the reaper runs by itself', async () => {
    const ws = await tempDir();
    const m = manager({ workspace: ws, idleMs: 200 });
    await m.acquire('a', 'javascript');
    await until('the idle kernel to be reaped', () => m.privateKernels().length === 0);
  }, 30_000);

  it.each(['python', 'javascript'] as const)(
    'a %s kernel exits when the companion process is killed with SIGKILL',
    async (language) => {
      const ws = await tempDir();
      const dist = path.join(REPO, 'server', 'dist', 'kernels', 'kernel-manager.js');
      const script = `
      const { KernelManager } = await import(${JSON.stringify(dist)});
      const m = new KernelManager({ workspace: ${JSON.stringify(ws)}, pythonArgv: ${JSON.stringify(pythonArgv)}, jsArgv: ${JSON.stringify(jsArgv)} });
      await m.acquire('a', ${JSON.stringify(language)});
      console.log(JSON.stringify(m.privateKernels()[0].pid));
      setInterval(() => {}, 1000);`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
        detached: true
      });
      const pid = await new Promise<number>((resolve, reject) => {
        child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
        child.once('exit', (code) => reject(new Error(`companion stand-in exited ${code}`)));
      });
      expect(alive(pid)).toBe(true);
      // Kill only the companion (not its process group): the kernel must notice by itself.
      process.kill(child.pid!, 'SIGKILL');
      await until(`the orphaned ${language} kernel ${pid} to exit`, () => !alive(pid));
    },
    60_000
  );
});
