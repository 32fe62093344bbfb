/**
 * Magic rewriting (SPEC EVAL-4): `%pip`, `%cd`, `!cmd`, `%%bash`, `%%timeit` (and the
 * line form `%timeit`) become plain code calling the kernel-side helper `__cellmate__`
 * (EVAL-5: every shell form — `!cmd`, `x = !cmd`, `!!cmd`, `%sx`, `%system`, `%%bash`,
 * `%%sh`, `%%script`, `%%perl`… — becomes `__cellmate__.sh`, a `shell` call through the
 * registry, so the shell policy, floor and approvals apply)
 * (injected by the eval session, see `tool-channel/python-helper.ts` and `tool-channel/js-helper.ts`),
 * in both languages. Pure: no I/O. Every rewrite is reported (SPEC HARN-2) as
 * `"<original line>" → <new code>`; other `%magics` are left alone (IPython runs them).
 *
 * JavaScript: `%pip install x` runs `npm install x` in the kernel's working directory and
 * clears `require.cache` (the JS analogue). A `!…` line is a shell command when it is not
 * valid JavaScript or when a command word is followed by arguments (`!ls -la`, `!npm -v`);
 * a lone `!name` (`!done`, also `!ls`) stays a JavaScript negation.
 */
import { parse } from 'acorn';

export type EvalLanguage = 'python' | 'javascript';

export interface MagicRewrite {
  /** The magic as written (first line of a cell magic). */
  original: string;
  /** The plain code it became (first line for cell magics). */
  replacement: string;
}

export interface RewrittenCell {
  code: string;
  rewrites: MagicRewrite[];
}

const lit = (s: string): string => JSON.stringify(s); // valid in Python and JS

/** Rewrites the magics of one cell. */
export function rewriteMagics(code: string, language: EvalLanguage): RewrittenCell {
  const cell = rewriteCellMagic(code, language);
  if (cell) return cell;
  const rewrites: MagicRewrite[] = [];
  const lines = code.split('\n').map((line) => {
    const out = rewriteLine(line, language);
    if (out === undefined) return line;
    rewrites.push({ original: line.trim(), replacement: out.trim() });
    return out;
  });
  return { code: lines.join('\n'), rewrites };
}

/** Script cell magics (IPython `ScriptMagics`): each starts a process, so each is shell. */
const SCRIPT_MAGICS = ['bash', 'sh', 'script', 'perl', 'ruby', 'python', 'python2', 'python3', 'pypy'] as const;

/**
 * The shell command a script cell magic stands for: the body itself for `%%bash`/`%%sh`,
 * else the interpreter reading the body from a here-document (`perl <<'…'`). Mirrors
 * `_script_command` in the Python helper (its backstop for nested cell magics).
 */
export function scriptCommand(magic: string, argLine: string, body: string): string {
  if (magic === 'bash' || magic === 'sh') return body;
  // IPython's own options (`--out var`, `--bg` …) are not part of the command.
  const args = argLine.replace(/--(?:out|err|proc)\s+\S+|--bg|--no-raise-error/g, ' ');
  const interp = (magic === 'script' ? args : `${magic} ${args}`).replace(/\s+/g, ' ').trim() || 'sh';
  const tag = '__CELLMATE_SCRIPT__';
  return `${interp} <<'${tag}'\n${body.replace(/\n+$/, '')}\n${tag}`;
}

function rewriteCellMagic(code: string, language: EvalLanguage): RewrittenCell | undefined {
  const m = /^\s*%%([a-z0-9]+)\b([^\n]*)\n?([\s\S]*)$/.exec(code);
  if (!m) return undefined;
  const [, magic = '', argLine = '', body = ''] = m;
  const isScript =
    (SCRIPT_MAGICS as readonly string[]).includes(magic) &&
    (language === 'python' || magic === 'bash' || magic === 'sh');
  if (!isScript && magic !== 'timeit') return undefined;
  const first = `%%${magic}${argLine}`.trim();
  let replacement: string;
  if (isScript) {
    // EVAL-5: the body runs as a `shell` call through the registry (policy, floor, approval).
    const command = lit(scriptCommand(magic, argLine, body));
    replacement = language === 'python' ? `__cellmate__.sh(${command})` : `await __cellmate__.sh(${command})`;
  } else {
    const { number, repeat } = timeitOptions(argLine);
    if (language === 'python') {
      const inner = rewriteMagics(body, language).code;
      replacement = `__cellmate__.timeit(${lit(inner)}, globals(), number=${number}, repeat=${repeat})`;
    } else {
      const inner = rewriteMagics(body, language).code;
      replacement = `await __cellmate__.timeit(async () => {\n${inner}\n}, { number: ${number}, repeat: ${repeat} })`;
    }
  }
  return {
    code: replacement,
    rewrites: [{ original: first, replacement: replacement.split('\n')[0]! + (replacement.includes('\n') ? ' …' : '') }]
  };
}

/** `-n N -r R` of %timeit; 0 means "choose automatically". */
function timeitOptions(args: string): { number: number; repeat: number } {
  const n = /-n\s*(\d+)/.exec(args);
  const r = /-r\s*(\d+)/.exec(args);
  return { number: n ? Number(n[1]) : 0, repeat: r ? Number(r[1]) : 7 };
}

function rewriteLine(line: string, language: EvalLanguage): string | undefined {
  const m = /^(\s*)(.*)$/.exec(line)!;
  const indent = m[1]!;
  const body = m[2]!;
  const py = language === 'python';
  const aw = py ? '' : 'await ';
  let mm: RegExpExecArray | null;
  if ((mm = /^%pip\s+(.*)$/.exec(body))) return `${indent}${aw}__cellmate__.pip(${lit(mm[1]!.trim())})`;
  if ((mm = /^%cd(?:\s+(.*))?$/.exec(body))) return `${indent}__cellmate__.cd(${lit((mm[1] ?? '~').trim())})`;
  if ((mm = /^%timeit\s+(.*)$/.exec(body))) {
    const { number, repeat } = timeitOptions(mm[1]!);
    const stmt = mm[1]!.replace(/-[nr]\s*\d+\s*/g, '').trim();
    return py
      ? `${indent}__cellmate__.timeit(${lit(stmt)}, globals(), number=${number}, repeat=${repeat})`
      : `${indent}await __cellmate__.timeit(async () => { ${stmt} }, { number: ${number}, repeat: ${repeat} })`;
  }
  // `x = !cmd`, `x = !!cmd`, `x = %sx cmd`, `x = %system cmd` (Python): capture the lines
  if (py && (mm = /^([A-Za-z_][\w.]*)\s*=\s*(?:!!?|%(?:sx|system)\s+)(.+)$/.exec(body))) {
    return `${indent}${mm[1]} = __cellmate__.sh(${lit(mm[2]!.trim())}, capture=True)`;
  }
  // `!!cmd`, `%sx cmd`, `%system cmd` (Python): the captured lines are the line's value
  if (py && (mm = /^(?:!!|%(?:sx|system)\s+)(.+)$/.exec(body))) {
    return `${indent}__cellmate__.sh(${lit(mm[1]!.trim())}, capture=True)`;
  }
  if ((mm = /^!(?!=)(.+)$/.exec(body))) {
    if (!py && isValidJs(body) && !/^![A-Za-z_.\/~][\w.\-\/~]*\s+\S/.test(body)) return undefined;
    return py
      ? `${indent}__cellmate__.sh(${lit(mm[1]!.trim())})`
      : `${indent}await __cellmate__.sh(${lit(mm[1]!.trim())})`;
  }
  return undefined;
}

function isValidJs(line: string): boolean {
  try {
    parse(line, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true });
    return true;
  } catch {
    return false;
  }
}

/** One line per rewrite, for the result (SPEC HARN-2). */
export function describeRewrites(rewrites: readonly MagicRewrite[]): string[] {
  return rewrites.map((r) => `${r.original} → ${r.replacement}`);
}
