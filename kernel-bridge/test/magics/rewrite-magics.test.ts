/** Magic rewriting (SPEC EVAL-4): pure, table-driven. */
import { describe, expect, it } from 'vitest';
import { rewriteMagics } from '../../src/magics/rewrite-magics.js';

describe('rewriteMagics (EVAL-4)', () => {
  it.each([
    ['python', '%pip install tabulate==0.9', '__cellmate__.pip("install tabulate==0.9")'],
    ['python', '%cd /tmp', '__cellmate__.cd("/tmp")'],
    ['python', '%cd', '__cellmate__.cd("~")'],
    ['python', '!ls -la "my dir"', '__cellmate__.sh("ls -la \\"my dir\\"")'],
    ['python', 'files = !ls', 'files = __cellmate__.sh("ls", capture=True)'],
    // EVAL-5: every shell spelling becomes a shell call through the registry
    ['python', 'files = !!ls', 'files = __cellmate__.sh("ls", capture=True)'],
    ['python', 'files = %sx ls -l', 'files = __cellmate__.sh("ls -l", capture=True)'],
    ['python', '%sx rm -rf victim', '__cellmate__.sh("rm -rf victim", capture=True)'],
    ['python', '%system rm -rf victim', '__cellmate__.sh("rm -rf victim", capture=True)'],
    ['python', '!!rm -rf victim', '__cellmate__.sh("rm -rf victim", capture=True)'],
    ['python', '%timeit -n 3 sum(x)', '__cellmate__.timeit("sum(x)", globals(), number=3, repeat=7)'],
    ['javascript', '%pip install left-pad', 'await __cellmate__.pip("install left-pad")'],
    ['javascript', '!ls -la', 'await __cellmate__.sh("ls -la")'],
    ['javascript', '%cd src', '__cellmate__.cd("src")']
  ] as const)('%s: %s', (language, line, expected) => {
    const r = rewriteMagics(line, language);
    expect(r.code).toBe(expected);
    expect(r.rewrites).toEqual([{ original: line, replacement: expected }]);
  });

  it('keeps indentation and leaves ordinary code and other magics alone', () => {
    const r = rewriteMagics('for i in range(2):\n    !echo $i\n%matplotlib inline\nx != 1', 'python');
    expect(r.code).toBe('for i in range(2):\n    __cellmate__.sh("echo $i")\n%matplotlib inline\nx != 1');
    expect(r.rewrites).toHaveLength(1);
  });

  it('cell magics: %%bash and %%timeit in both languages', () => {
    expect(rewriteMagics('%%bash\necho hi\n', 'python').code).toBe('__cellmate__.sh("echo hi\\n")');
    expect(rewriteMagics('%%bash\necho hi', 'javascript').code).toBe('await __cellmate__.sh("echo hi")');
    expect(rewriteMagics('%%timeit -r 2\nx = 1', 'python').code).toBe(
      '__cellmate__.timeit("x = 1", globals(), number=0, repeat=2)'
    );
    expect(rewriteMagics('%%timeit\nf()', 'javascript').code).toBe(
      'await __cellmate__.timeit(async () => {\nf()\n}, { number: 0, repeat: 7 })'
    );
  });

  it('EVAL-5: script cell magics are shell commands (interpreters read the body from a here-document)', () => {
    expect(rewriteMagics('%%sh\nrm -rf v', 'python').code).toBe('__cellmate__.sh("rm -rf v")');
    expect(rewriteMagics('%%perl\nprint 1;', 'python').code).toBe(
      `__cellmate__.sh(${JSON.stringify("perl <<'__CELLMATE_SCRIPT__'\nprint 1;\n__CELLMATE_SCRIPT__")})`
    );
    expect(rewriteMagics('%%script python3 -u\nprint(1)\n', 'python').code).toBe(
      `__cellmate__.sh(${JSON.stringify("python3 -u <<'__CELLMATE_SCRIPT__'\nprint(1)\n__CELLMATE_SCRIPT__")})`
    );
    expect(rewriteMagics('%%sh\nls', 'javascript').code).toBe('await __cellmate__.sh("ls")');
    expect(rewriteMagics('%%script --out x --bg ruby -w\nputs 1', 'python').code).toBe(
      `__cellmate__.sh(${JSON.stringify("ruby -w <<'__CELLMATE_SCRIPT__'\nputs 1\n__CELLMATE_SCRIPT__")})`
    );
    expect(rewriteMagics('%%capture\nx = 1', 'python').rewrites).toHaveLength(0);
  });

  it('JavaScript: a lone `!name` stays a negation; a command with arguments is shell', () => {
    expect(rewriteMagics('!done', 'javascript').rewrites).toHaveLength(0);
    expect(rewriteMagics('!ls', 'javascript').rewrites).toHaveLength(0);
    expect(rewriteMagics('!git status', 'javascript').rewrites).toHaveLength(1);
    expect(rewriteMagics('!mkdir -p /tmp/x', 'javascript').rewrites).toHaveLength(1);
  });
});
