/**
 * EvalSession against real kernels: ipykernel from the project venv and Cellmate's JS
 * kernel (SPEC EVAL-2…6). Timeouts are explicit; nothing asserts on timing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalSession, type EvalOutcome } from '../../src/eval/eval-session.js';
import type { KernelClient } from '../../src/eval/kernel-client.js';
import { launchKernel, pythonKernelArgv, type LaunchedKernel } from '../../src/launch/launcher.js';
import {
  buildKernelBridge,
  HAS_VENV_PYTHON,
  JS_KERNEL_MAIN,
  shellToolStandIn,
  streamText,
  VENV_PYTHON
} from '../helpers/kernels.js';

const text = (o: EvalOutcome, name: 'stdout' | 'stderr' = 'stdout'): string =>
  o.outputs
    .filter((x) => x.type === 'stream' && x.name === name)
    .map((x) => (x as { text: string }).text)
    .join('');
const result = (o: EvalOutcome): Record<string, unknown> | undefined =>
  (o.outputs.find((x) => x.type === 'display' && x.result) as { data: Record<string, unknown> } | undefined)?.data;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A tool handler like the registry's: `read` returns a text, `write` is refused. */
async function fakeTool(name: string, args: unknown) {
  if (name === 'echo') return { ok: true as const, output: JSON.stringify(args) };
  if (name === 'slow') {
    await sleep(2500);
    return { ok: true as const, output: 'slow done' };
  }
  return { ok: false as const, error: `Tool "${name}" is not available on this surface.` };
}

describe.skipIf(!HAS_VENV_PYTHON)('EvalSession on ipykernel (SPEC EVAL)', () => {
  let kernel: LaunchedKernel;
  let session: EvalSession;
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'cellmate-eval-py-')));

  beforeAll(async () => {
    kernel = await launchKernel({ argv: pythonKernelArgv(VENV_PYTHON), cwd: work, startupTimeoutMs: 60_000 });
    session = new EvalSession(kernel.client, 'python');
  }, 90_000);
  afterAll(async () => {
    await kernel?.shutdown();
    rmSync(work, { recursive: true, force: true });
  });

  it('EVAL-2/3: state persists, the last value is echoed, errors carry the traceback', async () => {
    expect((await session.run({ code: 'x = 41' })).status).toBe('ok');
    const r = await session.run({ code: 'print("hi")\nx + 1' });
    expect(text(r)).toBe('hi\n');
    expect(result(r)?.['text/plain']).toBe('42');
    const e = await session.run({ code: 'def f():\n    raise ValueError("boom")\nf()' });
    expect(e.status).toBe('error');
    const err = e.outputs.find((o) => o.type === 'error') as { ename: string; evalue: string; traceback: string[] };
    expect(err.ename).toBe('ValueError');
    expect(err.traceback.join('\n')).toContain('boom');
  });

  it('evals on one kernel run one at a time, in call order: the next request goes out only after the previous one finished', async () => {
    // A real ipykernel behind a client that counts requests in flight. Without the queue
    // all three would be sent at once, and ipykernel's stop_on_error would abort the two
    // waiting behind the failing cell (reply status "aborted") — the queue is what lets
    // an eval after a failed one run.
    let inFlight = 0;
    let most = 0;
    const sent: string[] = [];
    const counting: KernelClient = {
      async execute(code, opts) {
        inFlight++;
        most = Math.max(most, inFlight);
        sent.push(code);
        try {
          return await kernel.client.execute(code, opts);
        } finally {
          inFlight--;
        }
      },
      interrupt: (opts) => kernel.client.interrupt(opts),
      dispose: () => undefined
    };
    const queued = new EvalSession(counting, 'python');
    const [a, b, c] = await Promise.all([
      queued.run({ code: 'import time\ntime.sleep(0.3)\nraise ValueError("first fails")' }),
      queued.run({ code: '"second"' }),
      queued.run({ code: '"third"' })
    ]);
    expect(most).toBe(1);
    expect(a.status).toBe('error');
    expect([b.status, result(b)?.['text/plain']]).toEqual(['ok', "'second'"]);
    expect([c.status, result(c)?.['text/plain']]).toEqual(['ok', "'third'"]);
    expect(
      sent.slice(-3).map((code) => (code.includes('first fails') ? 'a' : code.includes('second') ? 'b' : 'c'))
    ).toEqual(['a', 'b', 'c']);
  }, 30_000);

  it('EVAL-3: a DataFrame arrives as HTML + text, a matplotlib figure as a PNG', async () => {
    const df = await session.run({ code: 'import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})' });
    expect(String(result(df)?.['text/html'])).toContain('<table');
    expect(String(result(df)?.['text/plain'])).toMatch(/a\s+b/);
    const fig = await session.run({ code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()' });
    const png = fig.outputs.find((o) => o.type === 'display' && 'image/png' in o.data) as {
      data: Record<string, string>;
    };
    expect(png).toBeDefined();
    expect(Buffer.from(png.data['image/png']!, 'base64').subarray(1, 4).toString()).toBe('PNG');
  }, 60_000);

  it('EVAL-4: %cd, !cmd, %%bash and %%timeit are rewritten and reported', async () => {
    const sub = join(work, 'sub');
    const cd = await session.run({
      code: `!mkdir -p ${sub}\n%cd ${sub}\nimport os\nprint(os.getcwd())`,
      onToolCall: shellToolStandIn
    });
    expect(cd.rewrites).toHaveLength(2);
    expect(text(cd)).toContain(`${sub}\n${sub}\n`);
    const bash = await session.run({ code: '%%bash\necho from-bash $((1+2))', onToolCall: shellToolStandIn });
    expect(bash.rewrites[0]).toMatch(/^%%bash → __cellmate__\.sh/);
    expect(text(bash)).toBe('from-bash 3\n');
    const ti = await session.run({ code: '%%timeit -n 2 -r 2\nsum(range(10))' });
    expect(ti.status).toBe('ok');
    expect(text(ti)).toMatch(/per loop \(mean \+- std\. dev\. of 2 runs, 2 loops each\)/);
    const cap = await session.run({ code: 'lines = !printf "a\\nb\\n"\nlines', onToolCall: shellToolStandIn });
    expect(result(cap)?.['text/plain']).toBe("['a', 'b']");
  }, 60_000);

  it('EVAL-5: shell magics are shell calls: no bridge = ToolError in the cell; a refusal stops the cell', async () => {
    const none = await session.run({ code: `!touch ${join(work, 'never')}\nprint("after")` });
    expect(none.status).toBe('error');
    expect(none.outputs.find((o) => o.type === 'error')).toMatchObject({ ename: 'ToolError' });
    expect(text(none)).not.toContain('after');
    const calls: unknown[] = [];
    const deny = (name: string, args: unknown) => {
      calls.push({ name, args });
      return shellToolStandIn(name, args, /^rm /m); // every line, as the shell policy judges them
    };
    const victim = join(work, 'victim');
    execFileSync('mkdir', ['-p', victim]);
    for (const code of [
      `!rm -rf ${victim}`,
      `x = !rm -rf ${victim}`,
      `%%bash\nrm -rf ${victim}`,
      `%%sh\nrm -rf ${victim}`,
      `%sx rm -rf ${victim}`,
      `%system rm -rf ${victim}`,
      `!!rm -rf ${victim}`
    ]) {
      const r = await session.run({ code, onToolCall: deny });
      expect(r.status, code).toBe('error');
      expect(
        r.outputs.find((o) => o.type === 'error'),
        code
      ).toMatchObject({ ename: 'ToolError', evalue: expect.stringMatching(/^Denied: shell on "rm -rf/) });
      expect(existsSync(victim), code).toBe(true);
    }
    // IPython's own routes (an alias, get_ipython().system, a nested %%script) hit the same gate.
    for (const code of [
      `%rm -rf ${victim}`,
      `get_ipython().system("rm -rf ${victim}")`,
      `%%capture\n%%script bash\nrm -rf ${victim}`
    ]) {
      const before = calls.length;
      await session.run({ code, onToolCall: deny }); // (%%capture swallows the ToolError)
      expect(existsSync(victim), code).toBe(true);
      expect(calls.length, code).toBe(before + 1);
    }
    // The user's own cells (not the agent's) keep IPython's shell.
    const own = await kernel.client.execute('!echo user-shell', { allowStdin: false });
    expect(streamText(own.iopub, 'stdout')).toContain('user-shell');
  }, 60_000);

  it('EVAL-4: %pip install of a local wheel, then import it in the next eval without a restart', async () => {
    const name = `cellmate_probe_${process.pid}`;
    const wheel = buildWheel(work, name);
    try {
      const before = await session.run({ code: `import ${name}` });
      expect(before.status).toBe('error');
      const pip = await session.run({ code: `%pip install --no-index --no-deps ${wheel}` });
      expect(pip.status).toBe('ok');
      expect(pip.rewrites[0]).toContain('__cellmate__.pip(');
      expect(text(pip)).toContain('import caches invalidated');
      const after = await session.run({ code: `import ${name}\n${name}.VALUE` });
      expect(after.status).toBe('ok');
      expect(result(after)?.['text/plain']).toBe("'installed'");
    } finally {
      execFileSync(VENV_PYTHON, ['-m', 'pip', 'uninstall', '-y', '-q', name.replaceAll('_', '-')], { stdio: 'ignore' });
    }
  }, 120_000);

  it('EVAL-5: tool() round-trips over stdin (a 3 MB payload is chunked); a refused call raises ToolError', async () => {
    const r = await session.run({
      code: 'import json\nbig = "x" * 3_000_000\nout = json.loads(tool("echo", {"big": big}))\nprint(len(out["big"]))',
      onToolCall: fakeTool
    });
    expect(text(r)).toBe('3000000\n');
    expect(r.bridgeCalls).toBe(1);
    const refused = await session.run({
      code: 'try:\n    tool("write", {"path": "x"})\nexcept ToolError as e:\n    print("refused:", e)',
      onToolCall: fakeTool
    });
    expect(text(refused)).toBe('refused: Tool "write" is not available on this surface.\n');
  }, 60_000);

  it('EVAL-5: tool() in a cell the notebook sent (unmarked) raises ToolError, never asks stdin', async () => {
    const r = await kernel.client.execute('try:\n    tool("echo")\nexcept ToolError as e:\n    print("refused:", e)', {
      allowStdin: true
    });
    const out = r.iopub
      .filter((m) => m.header.msg_type === 'stream')
      .map((m) => (m.content as { text: string }).text)
      .join('');
    expect(out).toContain('refused: tool() works only in cells the Cellmate agent runs with eval');
  });

  it('EVAL-6: a silent cell is interrupted at the idle budget; a long bridge call pauses the budget', async () => {
    const idle = await session.run({ code: 'import time\ntime.sleep(60)', idleTimeoutMs: 1500 });
    expect(idle.status).toBe('idle-timeout');
    const bridged = await session.run({ code: 'print(tool("slow"))', idleTimeoutMs: 1000, onToolCall: fakeTool });
    expect(bridged.status).toBe('ok');
    expect(text(bridged)).toBe('slow done\n');
    expect((await session.run({ code: 'x' })).status).toBe('ok'); // state survived the interrupt
  }, 60_000);

  it('aborting the signal interrupts the cell', async () => {
    const ac = new AbortController();
    const running = session.run({
      code: 'import time\nprint("start", flush=True)\ntime.sleep(60)',
      signal: ac.signal,
      onOutput: () => ac.abort()
    });
    expect((await running).status).toBe('aborted');
  }, 30_000);

  it('a kernel killed mid-cell ends the eval with kernel-died', async () => {
    const running = session.run({
      code: 'import time\nprint("start", flush=True)\ntime.sleep(60)',
      onOutput: () => process.kill(kernel.pid!, 'SIGKILL')
    });
    expect((await running).status).toBe('kernel-died');
  }, 30_000);
});

describe('EvalSession on the JS kernel (SPEC EVAL)', () => {
  let kernel: LaunchedKernel;
  let session: EvalSession;
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'cellmate-eval-js-')));

  beforeAll(async () => {
    buildKernelBridge();
    kernel = await launchKernel({
      argv: [process.execPath, JS_KERNEL_MAIN, '-f', '{connection_file}'],
      cwd: work,
      startupTimeoutMs: 60_000
    });
    session = new EvalSession(kernel.client, 'javascript');
  }, 120_000);
  afterAll(async () => {
    await kernel?.shutdown();
    rmSync(work, { recursive: true, force: true });
  });

  it('EVAL-2: state persists; EVAL-5: await tool() works and refusals reject with ToolError', async () => {
    await session.run({ code: 'let n = 20' });
    const r = await session.run({
      code: 'const got = JSON.parse(await tool("echo", { n }));\ngot.n + 1',
      onToolCall: fakeTool
    });
    expect(result(r)?.['text/plain']).toBe('21');
    const refused = await session.run({
      code: 'try { await tool("write", {}) } catch (e) { console.log(e.name, e.message) }',
      onToolCall: fakeTool
    });
    expect(text(refused)).toBe('ToolError Tool "write" is not available on this surface.\n');
  });

  it('EVAL-5: tool() in a cell the agent did not send raises ToolError instead of asking stdin', async () => {
    const r = await kernel.client.execute(
      'try { await tool("echo", {}) } catch (e) { console.log(e.name, e.message) }',
      { allowStdin: true }
    );
    expect(
      r.iopub.some(
        (m) =>
          m.header.msg_type === 'stream' &&
          String((m.content as { text: string }).text).startsWith(
            'ToolError tool() works only in cells the Cellmate agent runs'
          )
      )
    ).toBe(true);
  });

  it('EVAL-4: magics in JavaScript', async () => {
    const sub = join(work, 'jsdir');
    const r = await session.run({ code: `!mkdir -p ${sub}\n%cd ${sub}\nprocess.cwd()`, onToolCall: shellToolStandIn });
    expect(r.rewrites).toHaveLength(2);
    expect(result(r)?.['text/plain']).toBe(`'${sub}'`);
    const bash = await session.run({ code: '%%bash\necho js-bash $((2+3))', onToolCall: shellToolStandIn });
    expect(text(bash)).toBe('js-bash 5\n');
    const ti = await session.run({ code: '%%timeit -n 2 -r 2\n[1, 2, 3].map((x) => x * 2)' });
    expect(text(ti)).toMatch(/2 runs, 2 loops each/);
    const neg = await session.run({ code: 'const done = false\n!done' });
    expect(neg.rewrites).toHaveLength(0);
    expect(result(neg)?.['text/plain']).toBe('true');
  }, 60_000);

  it('EVAL-4: %pip in JavaScript runs npm (a local package), then require() sees it without a restart', async () => {
    const pkg = join(work, 'probe-pkg');
    execFileSync('mkdir', ['-p', pkg]);
    execFileSync(process.execPath, [
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(join(pkg, 'package.json'))}, JSON.stringify({ name: 'cellmate-probe-js', version: '0.1.0', main: 'index.js' })); require('fs').writeFileSync(${JSON.stringify(join(pkg, 'index.js'))}, "module.exports = { value: 'npm-installed' }")`
    ]);
    await session.run({ code: `%cd ${work}` });
    const before = await session.run({ code: 'require("cellmate-probe-js")' });
    expect(before.status).toBe('error');
    const pip = await session.run({
      code: '%pip install --no-audit --no-fund --offline ./probe-pkg',
      onToolCall: shellToolStandIn
    });
    expect(pip.rewrites[0]).toContain('await __cellmate__.pip(');
    expect(text(pip)).toContain('require cache cleared');
    const after = await session.run({ code: 'require("cellmate-probe-js").value' });
    expect(result(after)?.['text/plain']).toBe("'npm-installed'");
  }, 120_000);

  it('EVAL-6: idle budget interrupts an awaiting cell', async () => {
    const idle = await session.run({ code: 'await new Promise((r) => setTimeout(r, 60000))', idleTimeoutMs: 1500 });
    expect(idle.status).toBe('idle-timeout');
    expect((await session.run({ code: 'n' })).status).toBe('ok');
  }, 30_000);
});

/** A minimal pure-Python wheel with `VALUE = 'installed'`, made without build tools. */
function buildWheel(dir: string, name: string): string {
  const script = `
import base64, hashlib, sys, zipfile
d, name = sys.argv[1], sys.argv[2]
dist = name.replace('_', '-')
whl = f"{d}/{name}-0.1-py3-none-any.whl"
files = {
  f"{name}/__init__.py": "VALUE = 'installed'\\n",
  f"{name}-0.1.dist-info/METADATA": f"Metadata-Version: 2.1\\nName: {dist}\\nVersion: 0.1\\n",
  f"{name}-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: cellmate-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
with zipfile.ZipFile(whl, "w") as z:
  for p, c in files.items():
    z.writestr(p, c)
    h = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{p},sha256={h},{len(c.encode())}")
  record.append(f"{name}-0.1.dist-info/RECORD,,")
  z.writestr(f"{name}-0.1.dist-info/RECORD", "\\n".join(record) + "\\n")
print(whl)
`;
  return execFileSync(VENV_PYTHON, ['-c', script, dir, name], { encoding: 'utf8' }).trim();
}
