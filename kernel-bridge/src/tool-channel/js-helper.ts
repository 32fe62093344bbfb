/**
 * Kernel-side helper for Cellmate's JS kernel (the JS counterpart of `python-helper.ts`):
 * `await tool(name, args)`, `ToolError`, and the `__cellmate__` object the rewritten
 * magics call. Executed once per kernel, silently.
 */
import { TOOL_CHANNEL_CHUNK, TOOL_CHANNEL_PREFIX } from './channel.js';

export const JS_HELPER = String.raw`
(() => {
  const PREFIX = ${JSON.stringify(TOOL_CHANNEL_PREFIX)};
  const CHUNK = ${TOOL_CHANNEL_CHUNK};
  const path = require('node:path');
  const { createRequire } = require('node:module');
  class ToolError extends Error {
    constructor(message) { super(message); this.name = 'ToolError'; }
  }
  const ask = async (obj) => input(PREFIX + JSON.stringify(obj));
  let seq = 0;
  async function tool(name, args = {}) {
    if (globalThis.__cellmate_bridge__ !== true) {
      throw new ToolError('tool() works only in cells the Cellmate agent runs with eval; this cell was run from the notebook');
    }
    const id = ++seq;
    const payload = JSON.stringify({ name, args });
    const parts = Math.max(1, Math.ceil(payload.length / CHUNK));
    let reply;
    try {
      for (let i = 0; i < parts; i++) {
        reply = await ask({ op: 'call', id, part: i, parts, data: payload.slice(i * CHUNK, (i + 1) * CHUNK) });
      }
    } catch (e) {
      if (e && e.name === 'StdinNotImplementedError') throw new ToolError('tool() works only in cells the Cellmate agent runs with eval');
      throw e;
    }
    const first = JSON.parse(reply);
    const pieces = [first.data];
    for (let i = 1; i < first.parts; i++) pieces.push(JSON.parse(await ask({ op: 'more', id, part: i })).data);
    const res = JSON.parse(pieces.join(''));
    if (!res.ok) throw new ToolError(res.error || 'tool call failed');
    return res.output;
  }
  // EVAL-5: !cmd and %%bash run as a Cellmate shell call (policy, floor, approval, audit);
  // a refused command throws ToolError with the registry's reason.
  async function sh(cmd) {
    // The shell tool's longest timeout: a magic is a command, not a cell.
    const out = await tool('shell', { command: cmd, cwd: process.cwd(), timeout_ms: 600000 });
    const lines = String(out).split('\n');
    let code = 0;
    while (lines.length && /^\[.*\]$/.test(lines[lines.length - 1])) {
      const m = /^\[(exit code (-?\d+)|killed .*)\]$/.exec(lines.pop());
      if (m) { code = m[2] !== undefined ? Number(m[2]) : -1; break; }
    }
    const text = lines.join('\n');
    if (text && text !== '(no output)') console.log(text);
    if (code) console.error('[exit code ' + code + ']');
  }
  function cd(dir) {
    const target = dir === '~' ? require('node:os').homedir() : dir.replace(/^~(?=\/)/, require('node:os').homedir());
    process.chdir(target);
    globalThis.require = createRequire(path.join(process.cwd(), '__cellmate_cell__.js'));
    console.log(process.cwd());
  }
  async function pip(argline) {
    // A shell line (npm's arguments are the user's text): through the gate like !npm …
    await sh('npm ' + argline);
    let n = 0;
    // Only modules under the working directory: the kernel's own modules share this cache.
    const root = process.cwd() + path.sep;
    for (const k of Object.keys(globalThis.require.cache)) if (k.startsWith(root)) { delete globalThis.require.cache[k]; n++; }
    console.log('[cellmate: %pip runs npm in JavaScript; require cache cleared (' + n + ' module(s))]');
  }
  async function timeit(fn, opts = {}) {
    let number = opts.number || 0;
    const repeat = Math.max(1, opts.repeat || 7);
    const run = async (k) => { const t0 = performance.now(); for (let i = 0; i < k; i++) await fn(); return (performance.now() - t0) / 1000; };
    if (!number) { number = 1; for (;;) { const t = await run(number); if (t >= 0.2) break; number *= 10; } }
    const per = [];
    for (let r = 0; r < repeat; r++) per.push((await run(number)) / number);
    const mean = per.reduce((a, b) => a + b, 0) / per.length;
    const std = Math.sqrt(per.reduce((a, b) => a + (b - mean) ** 2, 0) / per.length);
    const fmt = (s) => { for (const [u, k] of [['s', 1], ['ms', 1e3], ['us', 1e6], ['ns', 1e9]]) if (s * k >= 1 || u === 'ns') return (s * k).toPrecision(3) + ' ' + u; };
    console.log(fmt(mean) + ' +- ' + fmt(std) + ' per loop (mean +- std. dev. of ' + per.length + ' runs, ' + number + ' loops each)');
  }
  globalThis.ToolError = ToolError;
  globalThis.tool = tool;
  globalThis.__cellmate__ = { tool, ToolError, sh, cd, pip, timeit };
})();
`;
