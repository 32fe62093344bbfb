/**
 * The Jupyter Server transport of the eval path (SPEC EVAL-2/5/6, faults) against a real
 * Jupyter Server, without a browser: a kernel Jupyter manages, our own WebSocket
 * connection (`JupyterServerKernelClient`) and `EvalSession` — a 12 MB `tool()` payload
 * crosses the 10 MiB WebSocket cap in chunks; the idle budget interrupts through the
 * server; a kernel killed mid-cell gives `kernel-died`, Jupyter restarts it, and the next
 * eval works after re-injecting the helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalSession, JupyterServerKernelClient, type EvalOutcome } from '@cellmate/kernel-bridge';
import { startJupyter, type Jupyter } from '../support/jupyter';

const stdout = (o: EvalOutcome): string =>
  o.outputs
    .filter((x) => x.type === 'stream' && x.name === 'stdout')
    .map((x) => (x as { text: string }).text)
    .join('');

describe('eval over Jupyter Server (issue #3)', () => {
  let jupyter: Jupyter;
  let client: JupyterServerKernelClient;
  let session: EvalSession;
  let restarts = 0;

  beforeAll(async () => {
    jupyter = await startJupyter();
    const res = await fetch(`${jupyter.url}/api/kernels`, {
      method: 'POST',
      headers: { Authorization: `token ${jupyter.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'python3' })
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    client = await JupyterServerKernelClient.connect({
      baseUrl: jupyter.url,
      token: jupyter.token,
      kernelId: id,
      kernelName: 'python3',
      timeoutMs: 60_000
    });
    client.onRestart(() => {
      restarts++;
      session.kernelRestarted();
    });
    session = new EvalSession(client, 'python');
  });

  afterAll(async () => {
    client?.dispose();
    await jupyter?.stop();
  });

  it('state persists and tool() round-trips a 12 MB payload in chunks over the WebSocket', async () => {
    await session.run({ code: 'x = 41' });
    const r = await session.run({
      code: 'import json\nbig = "z" * 12_000_000\nback = tool("echo", {"big": big})\nprint(len(json.loads(back)["big"]), x + 1)',
      onToolCall: async (_name, args) => ({ ok: true, output: JSON.stringify(args) })
    });
    expect(r.status).toBe('ok');
    expect(stdout(r)).toBe('12000000 42\n');
  }, 60_000);

  it("EVAL-2: output past the server's IOPub data rate limit is a notice from the server, not a restart", async () => {
    const seen = restarts;
    // 6 MB of stdout at once exceeds Jupyter Server's default 1 MB/s over its 3 s window: the server
    // drops output and sends its own "IOPub data rate exceeded" stream, under its own session id.
    const r = await session.run({ code: 'print("x" * 6_000_000)\nprint("y" * 6_000_000)\ndone = 7' });
    expect(r.status).toBe('ok');
    expect(
      r.outputs
        .filter((x) => x.type === 'stream')
        .map((x) => (x as { text: string }).text)
        .join('')
    ).toContain('IOPub data rate exceeded');
    expect(restarts).toBe(seen);
    const after = await session.run({ code: 'print(done)' });
    expect(stdout(after)).toBe('7\n');
  });

  it('the idle budget interrupts through the server', async () => {
    const r = await session.run({ code: 'import time\ntime.sleep(60)', idleTimeoutMs: 1500 });
    expect(r.status).toBe('idle-timeout');
    expect(stdout(await session.run({ code: 'print(x)' }))).toBe('41\n');
  }, 60_000);

  it("an eval queued behind the user's own long cell is not timed out, and never interrupts that cell", async () => {
    const user = await JupyterServerKernelClient.connect({
      baseUrl: jupyter.url,
      token: jupyter.token,
      kernelId: client.kernel.id,
      timeoutMs: 30_000
    });
    try {
      const users = user.execute('import time\ntime.sleep(4)\nprint("user cell finished")');
      await new Promise((res) => setTimeout(res, 300)); // the user's cell is running
      const agent = await session.run({ code: 'print("agent ran")', idleTimeoutMs: 1500 });
      const u = await users;
      expect(u.reply.content.status).toBe('ok');
      expect(agent.status).toBe('ok');
      expect(stdout(agent)).toBe('agent ran\n');
    } finally {
      user.dispose();
    }
  }, 60_000);

  it('reset: a restart through the server clears state; the helper is injected again', async () => {
    await session.run({ code: 'before_reset = 1' });
    const seen = restarts;
    await client.restart();
    expect(restarts).toBeGreaterThan(seen);
    const r = await session.run({ code: 'print("before_reset" in globals(), callable(tool))' });
    expect(stdout(r)).toBe('False True\n');
    await session.run({ code: 'x = 41' });
  }, 60_000);

  it("EVAL-2: a restart another client asks for mid-cell (JupyterLab's Restart Kernel) ends the eval as kernel-died, not a hang", async () => {
    await session.run({ code: 'x = 41' });
    const seen = restarts;
    let asked = false;
    const r = await session.run({
      code: 'import time\nprint("start", flush=True)\ntime.sleep(60)',
      onOutput: () => {
        if (asked) return;
        asked = true;
        // What JupyterLab's Kernel menu does: the REST call, from the browser's own connection.
        void fetch(`${jupyter.url}/api/kernels/${client.kernel.id}/restart`, {
          method: 'POST',
          headers: { Authorization: `token ${jupyter.token}` }
        });
      }
    });
    expect(r.status).toBe('kernel-died');
    expect(restarts).toBeGreaterThan(seen);
    const after = await session.run({ code: 'print("x" in globals(), callable(tool))' });
    expect(stdout(after)).toBe('False True\n');
    await session.run({ code: 'x = 41' });
  }, 90_000);

  it('a kernel killed mid-cell: kernel-died, then Jupyter restarts it and the next eval works', async () => {
    const pid = Number(stdout(await session.run({ code: 'import os\nprint(os.getpid())' })).trim());
    expect(pid).toBeGreaterThan(0);
    const r = await session.run({
      code: 'import time\nprint("start", flush=True)\ntime.sleep(60)',
      onOutput: () => process.kill(pid, 'SIGKILL')
    });
    expect(r.status).toBe('kernel-died');
    expect(restarts).toBeGreaterThan(0);
    // Jupyter's nanny restarts the kernel; wait until it answers, then eval again.
    await client.kernel.info;
    let after: EvalOutcome | undefined;
    for (let i = 0; i < 60 && after?.status !== 'ok'; i++) {
      await new Promise((res) => setTimeout(res, 500));
      after = await session
        .run({
          code: 'print("x" in globals(), tool is not None)',
          idleTimeoutMs: 5000,
          onToolCall: async () => ({ ok: true, output: '' })
        })
        .catch(() => undefined);
    }
    expect(after?.status).toBe('ok');
    expect(stdout(after!)).toBe('False True\n');
  }, 90_000);
});
