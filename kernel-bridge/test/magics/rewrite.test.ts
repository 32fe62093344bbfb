/** Magic rewriting (SPEC EVAL-4): pure, table-driven. */
import { describe, expect, it } from 'vitest';
import { rewriteMagics } from '../../src/magics/rewrite.js';

describe('rewriteMagics (EVAL-4)', () => {
  it.each([
    ['python', '%pip install tabulate==0.9', '__cellmate__.pip("install tabulate==0.9")'],
    ['python', '%cd /tmp', '__cellmate__.cd("/tmp")'],
    ['python', '%cd', '__cellmate__.cd("~")'],
    ['python', '!ls -la "my dir"', '__cellmate__.sh("ls -la \\"my dir\\"")'],
    ['python', 'files = !ls', 'files = __cellmate__.sh("ls", capture=True)'],
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
    expect(rewriteMagics('%%bash\necho hi\n', 'python').code).toBe('__cellmate__.sh("echo hi\\n", shell="/bin/bash")');
    expect(rewriteMagics('%%bash\necho hi', 'javascript').code).toBe("await __cellmate__.sh(\"echo hi\", { shell: '/bin/bash' })");
    expect(rewriteMagics('%%timeit -r 2\nx = 1', 'python').code).toBe('__cellmate__.timeit("x = 1", globals(), number=0, repeat=2)');
    expect(rewriteMagics('%%timeit\nf()', 'javascript').code).toBe('await __cellmate__.timeit(async () => {\nf()\n}, { number: 0, repeat: 7 })');
  });

  it('JavaScript: a lone `!name` stays a negation; a command with arguments is shell', () => {
    expect(rewriteMagics('!done', 'javascript').rewrites).toHaveLength(0);
    expect(rewriteMagics('!ls', 'javascript').rewrites).toHaveLength(0);
    expect(rewriteMagics('!git status', 'javascript').rewrites).toHaveLength(1);
    expect(rewriteMagics('!mkdir -p /tmp/x', 'javascript').rewrites).toHaveLength(1);
  });
});
