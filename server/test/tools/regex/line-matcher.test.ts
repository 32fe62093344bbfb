/**
 * User regexes run off the event loop with a hard timeout (HARN-2): the
 * catastrophic pattern is stopped with a clear error while the main thread keeps serving
 * timers; normal patterns keep JavaScript's semantics (lookbehind, backreferences, flags).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { grepTool } from '../../../src/tools/grep/grep.js';
import { ToolRegistry } from '../../../src/gate/registry.js';
import { readTool } from '../../../src/tools/read/read.js';
import { splitLines } from '../../../src/base/lines.js';
import { LineMatcher, RegexTimeoutError } from '../../../src/tools/regex/line-matcher.js';
import { tempDir } from '../../helpers/temp.js';

const EVIL = '^(a+)+$';
const VICTIM = `${'a'.repeat(30)}!`;

describe('LineMatcher', () => {
  it('matches with JavaScript semantics, line numbers 1-based, lines split like readline, as read numbers them', async () => {
    const m = new LineMatcher('(?<=x)(\\w)\\1', 'u');
    try {
      const text = 'xaa\nyaa\r\nxbb\rxbc\n';
      expect(await m.matchLines(text, 'f')).toEqual([1, 3]);
      // The worker numbers lines as grep's snippets are cut from them.
      expect(splitLines(text, { loneCR: 'ends-line' })).toEqual(['xaa', 'yaa', 'xbb', 'xbc']);
    } finally {
      m.dispose();
    }
    expect(() => new LineMatcher('(', 'u')).toThrow(SyntaxError);
  });

  it('stops a catastrophic pattern at its budget while the event loop keeps running', async () => {
    const m = new LineMatcher(EVIL, 'u', { timeoutMs: 300 });
    const order: string[] = [];
    // A timer on the main thread fires while the regex runs: the loop is not blocked.
    const tick = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('main thread tick');
        resolve();
      }, 50)
    );
    const result = m.matchLines(VICTIM, 'victim.txt').then(
      () => order.push('matched'),
      (e: unknown) => {
        order.push('stopped');
        return e;
      }
    );
    await tick;
    const error = await result;
    expect(order).toEqual(['main thread tick', 'stopped']);
    expect(error).toBeInstanceOf(RegexTimeoutError);
    expect((error as Error).message).toContain(JSON.stringify(EVIL));
    // The matcher is usable again after a timeout (a fresh worker).
    expect(await m.matchLines('aaa\nab', 'f')).toEqual([1]);
    m.dispose();
  });

  it('an abort stops the worker', async () => {
    const controller = new AbortController();
    const m = new LineMatcher(EVIL, 'u', { timeoutMs: 60_000, signal: controller.signal });
    const p = m.matchLines(VICTIM, 'f');
    setTimeout(() => controller.abort(new Error('stopped by the user')), 20);
    await expect(p).rejects.toThrow('stopped by the user');
    m.dispose();
  });
});

describe('grep with a catastrophic pattern', () => {
  it('returns a timeout error naming the pattern; the result format is unchanged otherwise', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'victim.txt'), `${VICTIM}\n`);
    await writeFile(path.join(ws, 'ok.txt'), 'alpha\nbeta\n');
    const registry = new ToolRegistry([grepTool]);
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c' };
    process.env.CELLMATE_REGEX_TIMEOUT_MS = '300';
    try {
      const bad = await registry.call('grep', { pattern: EVIL }, ctx);
      expect(bad).toMatchObject({ ok: false, status: 'error' });
      expect(bad.output).toContain('took longer than 300 ms');
      expect(bad.output).toContain(JSON.stringify(EVIL));
      const good = await registry.call('grep', { pattern: 'b.t' }, ctx);
      expect(good).toMatchObject({ ok: true, output: 'ok.txt:2: beta\n(1 match in 1 file)' });
    } finally {
      delete process.env.CELLMATE_REGEX_TIMEOUT_MS;
    }
  });
});

describe("grep's line numbers are read's (HARN-3)", () => {
  it('a file with a lone carriage return: the line grep names is the line read shows', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'log.txt'), 'start\nprogress 10%\rprogress 100%\ndone: target\n');
    const registry = new ToolRegistry([grepTool, readTool]);
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c' };
    const found = await registry.call('grep', { pattern: 'target' }, ctx);
    const line = Number(/^log\.txt:(\d+):/.exec(found.output)?.[1]);
    expect(line).toBe(4);
    const shown = await registry.call('read', { path: 'log.txt', offset: line, limit: 1 }, ctx);
    expect(shown.output).toContain('done: target');
  });
});
