/**
 * The JS kernel, spawned from dist/ (built in beforeAll), driven by the same
 * ZmqKernelClient as ipykernel.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchKernel, type LaunchedKernel } from '../../src/launch/launcher.js';
import { isDisplayDataMsg, isErrorMsg, isExecuteResultMsg, type AnyMessage } from '../../src/messaging/messages.js';
import {
  buildKernelBridge,
  HAS_VENV_PYTHON,
  JS_KERNEL_MAIN,
  PACKAGE_DIR,
  streamText,
  VENV_PYTHON
} from '../helpers/kernels.js';

const T = { timeoutMs: 10_000 };
const argv = () => [process.execPath, JS_KERNEL_MAIN, '-f', '{connection_file}'];
const result = (iopub: AnyMessage[]) => iopub.filter(isExecuteResultMsg)[0]?.content.data['text/plain'];
const error = (iopub: AnyMessage[]) => iopub.filter(isErrorMsg)[0]?.content;

/** Resolves once the kernel published execute_input for some cell (it is running). */
function cellStarted(kernel: LaunchedKernel): Promise<void> {
  return new Promise((resolve) => {
    const sub = kernel.client.onIOPub((m) => {
      if (m.header.msg_type === 'execute_input') {
        sub.dispose();
        resolve();
      }
    });
  });
}

/**
 * Before sending SIGINT, let the cell get past its first few milliseconds: a SIGINT that
 * lands while V8's SIGINT watchdog is being torn down after a *short* synchronous part is
 * lost (Node's vm watchdog race, reproduced here under CPU load; see README). The
 * control-channel interrupt has no such window and is tested without a delay.
 */
const settle = () => new Promise((r) => setTimeout(r, 150));

beforeAll(() => buildKernelBridge(), 120_000);

describe('JS kernel', () => {
  let kernel: LaunchedKernel;

  beforeAll(async () => {
    kernel = await launchKernel({ argv: argv(), startupTimeoutMs: 20_000 });
  }, 30_000);
  afterAll(async () => {
    await kernel?.shutdown(3000);
  }, 10_000);

  it('answers kernel_info as javascript', () => {
    const info = kernel.kernelInfo.content;
    expect(info.language_info).toMatchObject({
      name: 'javascript',
      file_extension: '.js',
      mimetype: 'text/javascript'
    });
    expect(info.protocol_version).toBe('5.3');
  });

  it('keeps state across executes (let a = 1, then a + 1)', async () => {
    const first = await kernel.client.execute('let a = 1', T);
    expect(first.reply.content.status).toBe('ok');
    expect(first.iopub.filter(isExecuteResultMsg)).toHaveLength(0);
    const second = await kernel.client.execute('a + 1', T);
    expect(result(second.iopub)).toBe('2');
    expect(second.reply.content.execution_count).toBe((first.reply.content.execution_count ?? 0) + 1);
    const types = second.iopub.map((m) => m.header.msg_type);
    expect(types).toEqual(['status', 'execute_input', 'execute_result', 'status']);
  });

  it('supports top-level await', async () => {
    const r = await kernel.client.execute('await new Promise(r => setTimeout(() => r(5), 10))', T);
    expect(result(r.iopub)).toBe('5');
    await kernel.client.execute('const fetched = await Promise.resolve({ n: 41 })', T);
    expect(result((await kernel.client.execute('fetched.n + 1', T)).iopub)).toBe('42');
  });

  it('streams console.log/info to stdout and console.error/warn to stderr', async () => {
    const r = await kernel.client.execute(
      'console.log("hi", { x: 1 }); console.info("i"); console.error("e"); console.warn("w")',
      T
    );
    expect(streamText(r.iopub, 'stdout')).toBe('hi { x: 1 }\ni\n');
    expect(streamText(r.iopub, 'stderr')).toBe('e\nw\n');
  });

  it('display() sends a mime bundle as display_data', async () => {
    const r = await kernel.client.execute(
      'display({ "text/html": "<b>bold</b>", "text/plain": "bold", "application/json": { k: [1, 2] } })',
      T
    );
    const d = r.iopub.filter(isDisplayDataMsg);
    expect(d).toHaveLength(1);
    expect(d[0]!.content.data).toEqual({
      'text/html': '<b>bold</b>',
      'text/plain': 'bold',
      'application/json': { k: [1, 2] }
    });
    expect(r.iopub.filter(isExecuteResultMsg)).toHaveLength(0); // display() returns undefined
  });

  it('uses _repr_html_ for a result when the value offers it', async () => {
    const r = await kernel.client.execute('({ _repr_html_: () => "<i>t</i>", toString() { return "t" } })', T);
    expect(r.iopub.filter(isExecuteResultMsg)[0]!.content.data['text/html']).toBe('<i>t</i>');
  });

  it('reports a thrown error with ename, evalue and a traceback into the cell', async () => {
    const r = await kernel.client.execute('function boom() {\n  throw new TypeError("bad thing")\n}\nboom()', T);
    expect(r.reply.content).toMatchObject({ status: 'error', ename: 'TypeError', evalue: 'bad thing' });
    const e = error(r.iopub)!;
    expect(e.ename).toBe('TypeError');
    expect(e.traceback[0]).toBe('TypeError: bad thing');
    expect(e.traceback.join('\n')).toMatch(/at boom \(<cell \d+>:2:9\)/);
    expect(e.traceback.join('\n')).not.toContain('dist/'); // kernel frames are hidden
  });

  it('reports a syntax error with the line and a caret', async () => {
    const r = await kernel.client.execute('let ok = 1\nlet = ;', T);
    const e = error(r.iopub)!;
    expect(e.ename).toBe('SyntaxError');
    expect(e.traceback).toContain('    let = ;');
  });

  it('answers is_complete with a syntax check', async () => {
    const status = async (code: string) => (await kernel.client.isComplete(code, T)).content.status;
    expect(await status('const x = 1')).toBe('complete');
    expect(await status('function f() {')).toBe('incomplete');
    expect(await status('let 1 = 2')).toBe('invalid');
  });

  it('completes globals and properties after a dot', async () => {
    await kernel.client.execute('const myObject = { alpha: 1, alphabet: 2, beta: 3 }', T);
    const g = (await kernel.client.complete('myOb', 4, T)).content;
    expect(g.status === 'ok' && g.matches).toEqual(['myObject']);
    const code = 'x = myObject.alp';
    const p = (await kernel.client.complete(code, code.length, T)).content;
    expect(p.status === 'ok' && p.matches).toEqual(['alpha', 'alphabet']);
    expect(p.status === 'ok' && [p.cursor_start, p.cursor_end]).toEqual([code.length - 3, code.length]);
    const builtin = (await kernel.client.complete('Math.ma', 7, T)).content;
    expect(builtin.status === 'ok' && builtin.matches).toContain('max');
  });

  it('inspects a name', async () => {
    const r = (await kernel.client.inspect('myObject', 3, T)).content;
    expect(r.status === 'ok' && r.found).toBe(true);
    expect(r.status === 'ok' && String(r.data['text/plain'])).toContain('alphabet');
  });

  it("answers await input('q') over stdin", async () => {
    const r = await kernel.client.execute("const answer = await input('q'); answer + '!'", {
      ...T,
      allowStdin: true,
      onInputRequest: (req) => `reply to ${req.content.prompt}`
    });
    expect(result(r.iopub)).toBe("'reply to q!'");
  });

  it('input() without allow_stdin raises StdinNotImplementedError', async () => {
    const r = await kernel.client.execute("await input('q')", T);
    expect(error(r.iopub)?.ename).toBe('StdinNotImplementedError');
  });

  it('interrupts a long await with a control interrupt_request', async () => {
    const started = cellStarted(kernel);
    const running = kernel.client.execute('await new Promise(r => setTimeout(r, 60_000))', T);
    await started;
    const reply = await kernel.client.request('control', 'interrupt_request', {}, T);
    expect(reply.content.status).toBe('ok');
    const r = await running;
    expect(r.reply.content.status).toBe('error');
    expect(error(r.iopub)?.ename).toBe('InterruptError');
  });

  it('interrupts a long await with SIGINT (kernelspec interrupt_mode signal)', async () => {
    expect(kernel.client.interruptMode).toBe('signal');
    const started = cellStarted(kernel);
    const running = kernel.client.execute('await new Promise(r => setTimeout(r, 60_000))', T);
    await started;
    await settle();
    await kernel.client.interrupt();
    expect(error((await running).iopub)?.ename).toBe('InterruptError');
  });

  it('interrupts a pending await input() and the kernel stays usable', async () => {
    const asked = new Promise<void>((resolve) => {
      const sub = kernel.client.onInputRequest(() => {
        sub.dispose();
        resolve();
      });
    });
    const running = kernel.client.execute("await input('never answered')", { ...T, allowStdin: true });
    await asked;
    await settle();
    await kernel.client.interrupt();
    expect(error((await running).iopub)?.ename).toBe('InterruptError');
    expect(result((await kernel.client.execute('a', T)).iopub)).toBe('1');
  });

  it('SIGINT stops a synchronous while(true){} before the first await', async () => {
    const started = cellStarted(kernel);
    const running = kernel.client.execute('while (true) {}', T);
    await started;
    await settle();
    // The heartbeat runs on its own thread: the kernel is busy, not dead.
    expect(await kernel.client.isAlive({ timeoutMs: 2000 })).toBe(true);
    await kernel.client.interrupt();
    const r = await running;
    expect(error(r.iopub)?.ename).toBe('InterruptError');
    expect(result((await kernel.client.execute('a + 1', T)).iopub)).toBe('2');
  });

  it('metadata cellmate.sync_timeout_ms bounds the synchronous part with vm timeout', async () => {
    const r = await kernel.client.execute('while (true) {}', {
      ...T,
      metadata: { cellmate: { sync_timeout_ms: 200 } }
    });
    expect(error(r.iopub)?.ename).toBe('TimeoutError');
  });

  it('an error thrown later by a timer goes to stderr and does not kill the kernel', async () => {
    const r = await kernel.client.execute(
      'setTimeout(() => { throw new Error("late") }, 5); await new Promise(r => setTimeout(r, 50))',
      T
    );
    expect(r.reply.content.status).toBe('ok');
    expect(streamText(r.iopub, 'stderr')).toContain('Uncaught exception: Error: late');
    expect(result((await kernel.client.execute('a', T)).iopub)).toBe('1');
  });
});

describe('JS kernel: what cannot be interrupted', () => {
  it('a synchronous endless loop after an await blocks the kernel until it is killed', async () => {
    const kernel = await launchKernel({ argv: argv(), startupTimeoutMs: 20_000 });
    try {
      const running = kernel.client.execute('await null; while (true) {}', { timeoutMs: 1500 });
      await new Promise((r) => setTimeout(r, 300));
      await kernel.client.interrupt();
      await expect(running).rejects.toMatchObject({ code: 'timeout' });
      expect(await kernel.client.isAlive({ timeoutMs: 1000 })).toBe(true); // heartbeat thread
    } finally {
      kernel.dispose(); // SIGKILL: the only way out
    }
  }, 30_000);
});

describe('kernelspec', () => {
  it('install-kernelspec.mjs writes kernel.json pointing at dist and this node', () => {
    const prefix = mkdtempSync(join(tmpdir(), 'cellmate-ks-'));
    try {
      execFileSync(process.execPath, [join(PACKAGE_DIR, 'scripts', 'install-kernelspec.mjs'), prefix], {
        timeout: 10_000
      });
      const spec = JSON.parse(
        readFileSync(join(prefix, 'share', 'jupyter', 'kernels', 'cellmate-js', 'kernel.json'), 'utf8')
      );
      expect(spec.argv).toEqual([process.execPath, JS_KERNEL_MAIN, '-f', '{connection_file}']);
      expect(spec).toMatchObject({ language: 'javascript', interrupt_mode: 'signal' });
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });

  it.skipIf(!HAS_VENV_PYTHON)(
    'jupyter_client drives the installed kernel (execute, stdin, interrupt)',
    () => {
      const prefix = mkdtempSync(join(tmpdir(), 'cellmate-ks-'));
      try {
        execFileSync(process.execPath, [join(PACKAGE_DIR, 'scripts', 'install-kernelspec.mjs'), prefix], {
          timeout: 10_000
        });
        const script = `
import time
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name='cellmate-js', startup_timeout=20)
out = []
r = kc.execute_interactive('let n = 40; console.log("hi"); n + 2', timeout=10, output_hook=lambda m: out.append(m['msg_type']))
assert r['content']['status'] == 'ok', r
assert 'stream' in out and 'execute_result' in out, out
r = kc.execute_interactive('await input("name? ")', allow_stdin=True, timeout=10, stdin_hook=lambda m: kc.input('bob'))
assert r['content']['status'] == 'ok', r
kc.execute('while(true){}')
time.sleep(0.5)
km.interrupt_kernel()
assert kc.get_shell_msg(timeout=5)['content']['ename'] == 'InterruptError'
km.shutdown_kernel(now=False)
print('OK')
`;
        const out = execFileSync(VENV_PYTHON, ['-c', script], {
          env: { ...process.env, JUPYTER_PATH: join(prefix, 'share', 'jupyter') },
          timeout: 60_000
        });
        expect(out.toString()).toContain('OK');
      } finally {
        rmSync(prefix, { recursive: true, force: true });
      }
    },
    70_000
  );
});
