/**
 * What a command line would run, recursively (SPEC HARN-5/6): the simple commands of the
 * line ({@link parseShell}) plus those of every script it hands to a shell — `bash -c`,
 * `sh -c`, `eval`, `env -S`, a literal heredoc or here-string into a shell, `find -exec` —
 * and the reasons it needs a person whatever the policy says (the floor). What cannot be
 * known before running is treated as dangerous: a line that does not parse, a command name
 * computed at run time, a script computed at run time (`eval "$(…)"`, `bash -c "$X"`,
 * `sh <(curl …)`), text piped into a shell or interpreter (`base64 -d | sh`).
 */
import { commandDangers, SHELLS } from './dangerous-rules.js';
import { parseShell, unwrapCommand, type ShellWord, type SimpleCommand } from './shell-parse.js';

/** The analysis of one command line. */
export interface ShellAnalysis {
  /** Every simple command that would run, nested scripts included, in source order. */
  commands: SimpleCommand[];
  /** Why a person must approve it (empty: the floor has no objection). */
  dangers: string[];
  /** Whether some part could not be parsed (then the line is judged as a whole). */
  unparsed: boolean;
}

/** Scripts nested deeper than this are not followed (and the line is dangerous). */
const MAX_DEPTH = 6;

/** Interpreters and the options that give them code inline. */
const INTERPRETERS: Record<string, string[]> = {
  python: ['-c'],
  node: ['-e', '--eval', '-p', '--print'],
  nodejs: ['-e', '--eval', '-p', '--print'],
  perl: ['-e', '-E'],
  ruby: ['-e'],
  php: ['-r'],
  lua: ['-e'],
  deno: ['eval'],
  bun: ['-e', '--eval'],
  Rscript: ['-e'],
  osascript: ['-e']
};

const cache = new Map<string, ShellAnalysis>();

/** Analyzes a command line (memoized: the gate asks for subjects and the floor in turn). */
export function analyzeShell(command: string): ShellAnalysis {
  const hit = cache.get(command);
  if (hit) return hit;
  const out: ShellAnalysis = { commands: [], dangers: [], unparsed: false };
  analyze(command, 0, out);
  if (cache.size >= 128) cache.delete(cache.keys().next().value!);
  cache.set(command, out);
  return out;
}

function analyze(text: string, depth: number, out: ShellAnalysis): void {
  if (depth > MAX_DEPTH) {
    out.dangers.push('it nests shells too deeply to check');
    return;
  }
  const parsed = parseShell(text);
  if (!parsed.ok) {
    out.unparsed = true;
    out.dangers.push(`the command line could not be checked (${parsed.why})`);
    return;
  }
  for (const fn of parsed.functions) {
    if (fn.calls.includes(fn.name) && fn.spawns)
      out.dangers.push(`fork bomb (the function ${fn.name} starts copies of itself)`);
  }
  for (const cmd of parsed.commands) visit(cmd, depth, out);
}

function visit(cmd: SimpleCommand, depth: number, out: ShellAnalysis): void {
  out.commands.push(cmd);
  out.dangers.push(...commandDangers(cmd));
  if (cmd.dynamicName) out.dangers.push(`the command name is computed at run time (${short(cmd.source)})`);
  if (cmd.splitString) {
    nested(cmd.splitString, [cmd.splitString.value, ...cmd.args.map((a) => a.source)].join(' '), 'env -S', depth, out);
  }
  const name = cmd.name;
  if (SHELLS.has(name)) shellScript(cmd, depth, out);
  else if (interpreterOf(name)) interpreterCode(cmd, interpreterOf(name)!, out);
  else if (name === 'eval') {
    const joined = cmd.args.map((a) => a.value).join(' ');
    if (cmd.args.every((a) => a.literal)) analyze(joined, depth + 1, out);
    else out.dangers.push(`eval runs text computed at run time (${short(cmd.source)})`);
  } else if (name === 'source' || name === '.') {
    const file = cmd.args[0];
    if (file && (!file.literal || file.value === '/dev/stdin' || (file.value === '-' && cmd.stdin !== 'inherit'))) {
      out.dangers.push(`${name} runs a script produced at run time (${short(cmd.source)})`);
    }
  } else if (name === 'find') findActions(cmd, depth, out);
  else if (name === 'watch' && cmd.args.length > 0) {
    // watch hands the rest of its words to `sh -c`.
    nested(
      { value: '', literal: cmd.args.every((a) => a.literal), source: '' },
      cmd.args.map((a) => a.value).join(' '),
      'watch',
      depth,
      out
    );
  }
}

function nested(word: ShellWord, script: string, what: string, depth: number, out: ShellAnalysis): void {
  if (word.literal) analyze(script, depth + 1, out);
  else out.dangers.push(`${what} runs a script computed at run time (${short(word.source)})`);
}

/** `bash -c SCRIPT`, `bash FILE`, or a shell reading its script from stdin. */
function shellScript(cmd: SimpleCommand, depth: number, out: ShellAnalysis): void {
  let reads: 'stdin' | 'file' | 'inline' = 'stdin';
  for (let i = 0; i < cmd.args.length; i++) {
    const a = cmd.args[i]!;
    if (a.literal && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.value)) {
      const script = cmd.args[i + 1];
      reads = 'inline';
      if (!script) break;
      nested(script, script.value, `${cmd.name} -c`, depth, out);
      break;
    }
    if (a.literal && (a.value === '-s' || a.value === '-' || a.value === '--')) break;
    if (a.literal && /^[-+]/.test(a.value)) {
      if (/^[-+]o$/.test(a.value) || a.value === '-O' || a.value === '--rcfile' || a.value === '--init-file') i++;
      continue;
    }
    reads = 'file';
    if (!a.literal) out.dangers.push(`${cmd.name} runs a script produced at run time (${short(a.source)})`);
    break;
  }
  if (reads !== 'stdin') return;
  if (cmd.stdin === 'pipe') out.dangers.push(`${pipeKind(cmd)} into a shell (${cmd.name} runs whatever it is sent)`);
  else if (cmd.stdinText) nested(cmd.stdinText, cmd.stdinText.value, `${cmd.name} <<`, depth, out);
}

function interpreterOf(name: string): string[] | undefined {
  const base = /^python[\d.]*$/.test(name) ? 'python' : /^pypy[\d.]*$/.test(name) ? 'python' : name;
  return INTERPRETERS[base];
}

/** An interpreter reading its program from a pipe, or running code computed at run time. */
function interpreterCode(cmd: SimpleCommand, codeOptions: string[], out: ShellAnalysis): void {
  for (let i = 0; i < cmd.args.length; i++) {
    const a = cmd.args[i]!;
    if (a.literal && codeOptions.includes(a.value)) {
      const code = cmd.args[i + 1];
      if (code && !code.literal) out.dangers.push(`${cmd.name} runs code computed at run time (${short(code.source)})`);
      return;
    }
    if (a.literal && (a.value === '-m' || (a.value.startsWith('-') && a.value !== '-'))) {
      if (a.value === '-m') return;
      continue;
    }
    if (a.literal && a.value !== '-') return; // a script file
    if (!a.literal) {
      out.dangers.push(`${cmd.name} runs a program produced at run time (${short(a.source)})`);
      return;
    }
    break; // `-`: the program comes from stdin
  }
  if (cmd.stdin === 'pipe')
    out.dangers.push(`${pipeKind(cmd)} into an interpreter (${cmd.name} runs whatever it is sent as code)`);
  else if (cmd.stdinText && !cmd.stdinText.literal)
    out.dangers.push(`${cmd.name} runs code computed at run time from a here-document`);
}

/** `find … -delete`, `-exec CMD … ;` (each CMD is a command of its own). */
function findActions(cmd: SimpleCommand, depth: number, out: ShellAnalysis): void {
  const args = cmd.args;
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (v === '-delete') out.dangers.push('find -delete deletes every match');
    if (v === '-exec' || v === '-execdir' || v === '-ok' || v === '-okdir') {
      const words: ShellWord[] = [];
      for (i++; i < args.length && args[i]!.value !== ';' && args[i]!.value !== '+'; i++) words.push(args[i]!);
      const resolved = unwrapCommand(words);
      const sub: SimpleCommand = {
        ...resolved,
        argsFromInput: true,
        stdin: 'inherit',
        redirects: [],
        source: words.map((w) => w.source).join(' ')
      };
      if (/^(rm|rmdir|unlink|shred|truncate|srm|wipe)$/.test(sub.name))
        out.dangers.push(`find ${v} runs ${sub.name} on every match`);
      if (SHELLS.has(sub.name) || sub.dynamicName)
        out.dangers.push(
          `find ${v} runs ${sub.dynamicName ? 'a command computed at run time' : sub.name} on every match`
        );
      visit(sub, depth + 1, out);
    }
  }
}

const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'nc', 'ncat', 'http', 'lynx']);
const DECODERS = new Set([
  'base64',
  'base32',
  'xxd',
  'openssl',
  'uudecode',
  'gunzip',
  'zcat',
  'gzip',
  'bzcat',
  'xzcat',
  'unzip',
  'rev',
  'tr',
  'printf',
  'od'
]);

/** How the pipe into a shell or interpreter is described: a download, decoded text, or text. */
function pipeKind(cmd: SimpleCommand): string {
  const up = cmd.upstream ?? [];
  if (up.some((n) => DOWNLOADERS.has(n))) return 'pipes a download';
  if (up.some((n) => DECODERS.has(n))) return 'decodes text and pipes it';
  return 'pipes text';
}

function short(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 60)}…` : one;
}
