import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { rewriteCell } from '../../src/js-kernel/top-level.js';
import { checkCompleteness } from '../../src/js-kernel/syntax.js';

/** Runs cells like the kernel does: rewritten, in one context, awaiting each. */
function session() {
  const context = vm.createContext({ setTimeout });
  return async (code: string): Promise<unknown> => {
    const cell = rewriteCell(code);
    const value = await new vm.Script(cell.code, { lineOffset: -1 }).runInContext(context);
    return cell.hasResult ? value : undefined;
  };
}

describe('rewriteCell', () => {
  it('keeps let/const/var/function/class declarations across cells', async () => {
    const run = session();
    await run('let a = 1\nconst b = 2\nvar c = 3\nfunction f(x) { return x * 10 }\nclass K { get v() { return 7 } }');
    expect(await run('a + b + c')).toBe(6);
    expect(await run('f(a)')).toBe(10);
    expect(await run('new K().v')).toBe(7);
  });

  it('lets a cell be re-run (re-declaring let and const is fine)', async () => {
    const run = session();
    await run('const a = 1');
    await run('const a = 2');
    expect(await run('let a = 3; a')).toBe(3);
  });

  it('supports top-level await with declarations persisting', async () => {
    const run = session();
    expect(await run('await new Promise(r => setTimeout(() => r(5), 10))')).toBe(5);
    await run('const v = await Promise.resolve(41)');
    expect(await run('v + 1')).toBe(42);
  });

  it('handles destructuring and bare declarations', async () => {
    const run = session();
    await run('const { p, q: [r1, ...rest] } = { p: 1, q: [2, 3, 4] }; let u; var w');
    expect(await run('[p, r1, rest, u, typeof w]')).toEqual([1, 2, [3, 4], undefined, 'undefined']);
    await run('w = 9');
    await run('var w');
    expect(await run('w')).toBe(9); // var without initializer keeps the value, as in a script
    await run('let u2 = 1');
    await run('let u2');
    expect(await run('u2')).toBeUndefined(); // let without initializer resets
  });

  it('hoists var nested in top-level loops/blocks but keeps block-scoped let local', async () => {
    const run = session();
    await run('for (var i = 0; i < 3; i++) { var last = i; let inner = i }\nfor (var k of [7, 8]) {}');
    expect(await run('[i, last, k, typeof inner]')).toEqual([3, 2, 8, 'undefined']);
  });

  it('does not touch declarations inside functions or strings/comments', async () => {
    const run = session();
    await run('function g() { var local = 1; let l2 = 2; return local + l2 }\nconst s = "let x = 1"; // var y = 2');
    expect(await run('[g(), s, typeof local, typeof x, typeof y]')).toEqual([
      3,
      'let x = 1',
      'undefined',
      'undefined',
      'undefined'
    ]);
  });

  it('reports a result only when the last statement is an expression', () => {
    expect(rewriteCell('1 + 1').hasResult).toBe(true);
    expect(rewriteCell('1 + 1; let z = 2').hasResult).toBe(false);
    expect(rewriteCell('if (true) { 3 }').hasResult).toBe(false);
    expect(rewriteCell("'use strict'").hasResult).toBe(false);
  });

  it("keeps a 'use strict' prologue first", async () => {
    const run = session();
    const cell = rewriteCell("'use strict'\nfunction h() { return this }\nh()");
    expect(cell.code.split('\n')[1]).toBe("'use strict'");
    expect(await run("'use strict'\nfunction h() { return this }\nh()")).toBeUndefined();
  });

  it('keeps line numbers of the cell (wrapper on line 0)', () => {
    const cell = rewriteCell('let a = 1\nthrow new Error("x")');
    expect(cell.code.split('\n')[2]).toBe('throw new Error("x")');
  });

  it('throws a SyntaxError with a position on bad syntax', () => {
    expect(() => rewriteCell('let = ;')).toThrow(SyntaxError);
  });
});

describe('checkCompleteness', () => {
  it.each([
    ['let a = 1', 'complete'],
    ['await x', 'complete'],
    ['function f() {', 'incomplete'],
    ['if (a) {\n  b(', 'incomplete'],
    ['const s = `abc', 'incomplete'],
    ['/* comment', 'incomplete'],
    ['a +', 'incomplete'],
    ['let 1 = 2', 'invalid'],
    ['a b c', 'invalid'],
    [')', 'invalid']
  ])('%j is %s', (code, status) => {
    expect(checkCompleteness(code).status).toBe(status);
  });

  it('suggests indentation after an open brace', () => {
    expect(checkCompleteness('function f() {').indent).toBe('  ');
  });
});
