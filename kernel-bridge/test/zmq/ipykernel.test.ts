/**
 * ZmqKernelClient + launcher against a real ipykernel from the project venv.
 * Skipped (with the reason in the test name) only when `.venv/bin/python` is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isKernelBridgeError } from '../../src/common/errors.js';
import { isExecuteResultMsg, isErrorMsg, type Message } from '../../src/messaging/messages.js';
import { launchKernel, pythonKernelArgv, type LaunchedKernel } from '../../src/launch/launcher.js';
import { ZmqKernelClient } from '../../src/zmq/client.js';
import { HAS_VENV_PYTHON, ofType, streamText, VENV_PYTHON } from '../helpers/kernels.js';

const T = { timeoutMs: 15_000 };

describe.skipIf(!HAS_VENV_PYTHON)(
  `real ipykernel (${VENV_PYTHON}${HAS_VENV_PYTHON ? '' : ' missing: skipped'})`,
  () => {
    let kernel: LaunchedKernel;

    beforeAll(async () => {
      kernel = await launchKernel({ argv: pythonKernelArgv(VENV_PYTHON), startupTimeoutMs: 60_000 });
    }, 90_000);

    afterAll(async () => {
      await kernel?.shutdown(5000);
    }, 20_000);

    it('answered kernel_info during launch', () => {
      expect(kernel.kernelInfo.content.language_info.name).toBe('python');
      expect(kernel.kernelInfo.content.protocol_version).toMatch(/^5\./);
      expect(kernel.pid).toBeGreaterThan(0);
    });

    it('keeps state: x = 41, then x + 1 → execute_result 42', async () => {
      const first = await kernel.client.execute('x = 41', T);
      expect(first.reply.content.status).toBe('ok');
      expect(ofType(first.iopub, 'execute_result')).toHaveLength(0);

      const seen: string[] = [];
      const second = await kernel.client.execute('x + 1', { ...T, onIOPub: (m) => seen.push(m.header.msg_type) });
      expect(second.reply.content.status).toBe('ok');
      const results = second.iopub.filter(isExecuteResultMsg);
      expect(results).toHaveLength(1);
      expect(results[0]!.content.data['text/plain']).toBe('42');
      expect(results[0]!.content.execution_count).toBe(second.reply.content.execution_count);
      // Ends on idle; the callback saw the same messages in the same order.
      expect(second.iopub.at(-1)!.header.msg_type).toBe('status');
      expect(seen).toEqual(second.iopub.map((m) => m.header.msg_type));
      expect(seen).toContain('execute_input');
    });

    it('collects stdout and stderr streams', async () => {
      const r = await kernel.client.execute('import sys\nprint("out", 1)\nprint("err", 2, file=sys.stderr)', T);
      expect(streamText(r.iopub, 'stdout')).toBe('out 1\n');
      expect(streamText(r.iopub, 'stderr')).toBe('err 2\n');
    });

    it('reports an error with ename, evalue and a traceback', async () => {
      const r = await kernel.client.execute('def f():\n    return 1 / 0\nf()', T);
      expect(r.reply.content.status).toBe('error');
      const errors = r.iopub.filter(isErrorMsg);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.content.ename).toBe('ZeroDivisionError');
      expect(errors[0]!.content.evalue).toBe('division by zero');
      // IPython colours its traceback with ANSI escapes.
      const plain = errors[0]!.content.traceback.join('\n').replace(/\x1b\[[0-9;]*m/g, '');
      expect(plain).toContain('return 1 / 0');
      expect(plain).toContain('f()');
    });

    it('answers input() over stdin sharing the shell identity (per-execute handler)', async () => {
      const prompts: string[] = [];
      const r = await kernel.client.execute('name = input("who? ")\nname.upper()', {
        ...T,
        allowStdin: true,
        onInputRequest: (req: Message<'input_request'>) => {
          prompts.push(req.content.prompt);
          return 'ada';
        }
      });
      expect(prompts).toEqual(['who? ']);
      expect(r.iopub.filter(isExecuteResultMsg)[0]!.content.data['text/plain']).toBe("'ADA'");
    });

    it('answers input() through onInputRequest + inputReply()', async () => {
      const sub = kernel.client.onInputRequest((req) => {
        expect(req.content.prompt).toBe('pw: ');
        void kernel.client.inputReply('s3cret');
      });
      try {
        const r = await kernel.client.execute('import getpass\nlen(getpass.getpass("pw: "))', {
          ...T,
          allowStdin: true
        });
        expect(r.iopub.filter(isExecuteResultMsg)[0]!.content.data['text/plain']).toBe('6');
      } finally {
        sub.dispose();
      }
      await expect(kernel.client.inputReply('nobody asked')).rejects.toSatisfy((e) =>
        isKernelBridgeError(e, 'no_pending_input')
      );
    });

    it('without allow_stdin, input() fails in the kernel', async () => {
      const r = await kernel.client.execute('input("x")', T);
      expect(r.reply.content.status).toBe('error');
      expect(r.iopub.filter(isErrorMsg)[0]!.content.ename).toBe('StdinNotImplementedError');
    });

    it('interrupts time.sleep(30) (SIGINT to the launched pid)', async () => {
      expect(kernel.client.interruptMode).toBe('signal');
      const started = Date.now();
      const running = kernel.client.execute('import time\ntime.sleep(30)', { timeoutMs: 20_000 });
      // Interrupt once the kernel is busy with this cell.
      await new Promise<void>((resolve) => {
        const sub = kernel.client.onIOPub((m) => {
          if (m.header.msg_type === 'execute_input') {
            sub.dispose();
            resolve();
          }
        });
      });
      await new Promise((r) => setTimeout(r, 300));
      await kernel.client.interrupt();
      const r = await running;
      expect(r.reply.content.status).toBe('error');
      expect(r.iopub.filter(isErrorMsg)[0]!.content.ename).toBe('KeyboardInterrupt');
      expect(Date.now() - started).toBeLessThan(15_000);
      // Still usable afterwards.
      const after = await kernel.client.execute('x', T);
      expect(after.iopub.filter(isExecuteResultMsg)[0]!.content.data['text/plain']).toBe('41');
    }, 30_000);

    it('interrupts with a control interrupt_request too (message mode)', async () => {
      const running = kernel.client.execute('import time\ntime.sleep(30)', { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 500));
      const reply = await kernel.client.request('control', 'interrupt_request', {}, { timeoutMs: 10_000 });
      expect(reply.content.status).toBe('ok');
      const r = await running;
      expect(r.reply.content.status).toBe('error');
    }, 30_000);

    it('a second client connects through the connection file and sees only its own stdin', async () => {
      const { client: other } = await ZmqKernelClient.connect(kernel.connectionFile, { connectTimeoutMs: 15_000 });
      try {
        const broadcast: string[] = [];
        const sub = kernel.client.onIOPub((m) => broadcast.push(m.header.msg_type));
        let firstClientAsked = false;
        const inputSub = kernel.client.onInputRequest(() => (firstClientAsked = true));
        const r = await other.execute('input("second? ")', { ...T, allowStdin: true, onInputRequest: () => 'two' });
        sub.dispose();
        inputSub.dispose();
        expect(r.iopub.filter(isExecuteResultMsg)[0]!.content.data['text/plain']).toBe("'two'");
        expect(firstClientAsked).toBe(false);
        expect(broadcast).toContain('execute_result'); // IOPub goes to every subscriber
      } finally {
        other.dispose();
      }
    }, 30_000);

    it('heartbeat: isAlive is true for a live kernel', async () => {
      expect(await kernel.client.isAlive({ timeoutMs: 2000 })).toBe(true);
    });

    it('aborting an execute rejects with aborted', async () => {
      const ac = new AbortController();
      const p = kernel.client.execute('import time\ntime.sleep(0.5)', { ...T, signal: ac.signal });
      ac.abort();
      await expect(p).rejects.toSatisfy((e) => isKernelBridgeError(e, 'aborted'));
      // Let the cell finish so it does not bleed into the next test.
      await new Promise((r) => setTimeout(r, 800));
    });
  }
);

describe.skipIf(!HAS_VENV_PYTHON)('kernel lifecycle', () => {
  it('shutdown ends the process and removes the connection file; calls then fail', async () => {
    const k = await launchKernel({ argv: pythonKernelArgv(VENV_PYTHON), startupTimeoutMs: 60_000 });
    const { existsSync } = await import('node:fs');
    expect(existsSync(k.connectionFile)).toBe(true);
    await k.shutdown(5000);
    expect(existsSync(k.connectionFile)).toBe(false);
    const exit = await k.exited;
    expect(exit.code === 0 || exit.signal !== null).toBe(true);
    await expect(k.client.execute('1')).rejects.toSatisfy((e) => isKernelBridgeError(e, 'disposed'));
  }, 60_000);

  it('a kernel that dies during start-up fails with launch_failed and its output', async () => {
    const err = await launchKernel({
      argv: [VENV_PYTHON, '-c', 'import sys; print("nope", file=sys.stderr); sys.exit(3)']
    }).catch((e) => e);
    expect(isKernelBridgeError(err, 'launch_failed')).toBe(true);
    expect(String(err.message)).toContain('nope');
  }, 30_000);

  it('a killed kernel rejects the pending execute with kernel_dead', async () => {
    const k = await launchKernel({ argv: pythonKernelArgv(VENV_PYTHON), startupTimeoutMs: 60_000 });
    try {
      const p = k.client.execute('import time\ntime.sleep(30)', { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 300));
      k.process.kill('SIGKILL');
      await expect(p).rejects.toSatisfy((e) => isKernelBridgeError(e, 'kernel_dead'));
    } finally {
      k.dispose();
    }
  }, 60_000);
});
