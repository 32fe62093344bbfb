/**
 * The values a deny-ruled file holds and how they are hidden in server text (the registry
 * applies this to results of tools that relay a language server, HARN-6).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ValueSet, WithheldValues, literalValues } from '../../src/gate/withheld-values.js';
import { tempDir } from '../helpers/temp.js';

describe('HARN-6 withheld values', () => {
  it('literalValues: quoted (raw and decoded), triple-quoted, numbers, unquoted KEY=value', () => {
    const v = literalValues(
      [
        'API_KEY = "sk-abc\\u0041def"',
        "NAME = 'short'",
        'x = "ab"',
        'PORT = 54321',
        'N = 7',
        'DOC = """line one here',
        'second line"""',
        'TOKEN=plain-unquoted-value'
      ].join('\n')
    );
    expect(v).toEqual(
      expect.arrayContaining([
        'sk-abc\\u0041def',
        'sk-abcAdef',
        'short',
        '54321',
        'line one here',
        'second line',
        'plain-unquoted-value'
      ])
    );
    expect(v).not.toContain('ab');
    expect(v).not.toContain('7');
  });

  it('hide: quoted literals that are, contain or start a value; long values anywhere; numbers as tokens', () => {
    const s = new ValueSet(['sk-live-0123456789', 'tok-ABCDEFGHIJKLMNOP', 'short', '54321', '7']);
    expect(s.hide(`k: Literal['sk-live-0123456789']`)).toBe(`k: Literal[[withheld]]`);
    expect(s.hide(`Type "Literal['sk-live-0123456789-suffix']" is not assignable`)).toBe(
      `Type "Literal[[withheld]]" is not assignable`
    );
    expect(s.hide(`Literal['tok-ABCDEF…']`)).toBe(`Literal[[withheld]]`);
    expect(s.hide('const k: "short"')).toBe('const k: [withheld]');
    expect(s.hide('plain sk-live-0123456789 text')).toBe('plain [withheld] text');
    expect(s.hide('pin: Literal[54321]; app.py:54321 stays')).toBe('pin: Literal[[withheld]]; app.py:54321 stays');
    // Short or unrelated text is left alone.
    expect(s.hide(`x: Literal[7] shortly 'other'`)).toBe(`x: Literal[7] shortly 'other'`);
    expect(s.hideDeep({ a: ['"short"'], n: 1 })).toEqual({ a: ['[withheld]'], n: 1 });
  });

  it('collect: only files the rules deny to read or to the tool, nothing when no rule denies', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'conf'));
    await writeFile(path.join(dir, 'conf', 'secrets.py'), 'KEY = "denied-value-1"\n');
    await writeFile(path.join(dir, 'app.py'), 'X = "allowed-value-1"\n');
    const w = new WithheldValues();
    const signal = new AbortController().signal;
    expect((await w.collect(dir, [], 'lsp', 'read', signal)).size).toBe(0);
    const denyRead = await w.collect(
      dir,
      [{ tool: 'read', pattern: 'conf/**', action: 'deny' }],
      'lsp',
      'read',
      signal
    );
    expect(denyRead.hide('"denied-value-1" "allowed-value-1"')).toBe('[withheld] "allowed-value-1"');
    const denyOther = await w.collect(
      dir,
      [{ tool: 'write', pattern: 'conf/**', action: 'deny' }],
      'lsp',
      'read',
      signal
    );
    expect(denyOther.size).toBe(0);
    expect(
      (await w.collect(dir, [{ tool: 'shell', pattern: 'rm*', action: 'deny' }], 'lsp', 'read', signal)).size
    ).toBe(0);
    expect(
      (await w.collect(dir, [{ tool: 'ls?', pattern: 'conf/*', action: 'deny' }], 'lsp', 'read', signal)).size
    ).toBe(1);
    // A changed file is read again (stat stamp).
    await writeFile(path.join(dir, 'conf', 'secrets.py'), 'KEY = "denied-value-22"\n');
    await new Promise((r) => setTimeout(r, 2_100));
    const again = await w.collect(dir, [{ tool: '*', pattern: 'conf/**', action: 'deny' }], 'lsp', 'read', signal);
    expect(again.hide('"denied-value-22"')).toBe('[withheld]');
  });

  it('collect: files outside the workspace that a pyrightconfig.json adds (extraPaths) count without any rule; a library folder does not', async () => {
    const parent = await tempDir();
    const ws = path.join(parent, 'ws');
    await mkdir(path.join(parent, 'outside'), { recursive: true });
    await mkdir(path.join(parent, 'lib', 'site-packages'), { recursive: true });
    await mkdir(ws);
    await writeFile(path.join(parent, 'outside', 'mod.py'), 'OUT = "outside-value-1"\n');
    await writeFile(path.join(parent, 'lib', 'site-packages', 'pkg.py'), 'MODE = "library-value-1"\n');
    await writeFile(
      path.join(ws, 'pyrightconfig.json'),
      JSON.stringify({ extraPaths: ['../outside', '../lib/site-packages', 'inside'] })
    );
    const set = await new WithheldValues().collect(ws, [], 'lsp', 'read', new AbortController().signal);
    expect(set.hide('"outside-value-1" "library-value-1"')).toBe('[withheld] "library-value-1"');
  });
});
