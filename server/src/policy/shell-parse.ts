/**
 * Bash command lines as data (SPEC HARN-5/6): tree-sitter-bash (through ast-grep) parses
 * the line; this module turns the tree into the simple commands that would run, each with
 * its words resolved the way bash would see them when that is knowable without running
 * anything (quotes removed, backslash escapes undone, `$'…'` decoded) and the command name
 * resolved through wrappers (`command`, `env`, `exec`, `sudo`, `xargs`, `timeout`, …) and
 * paths (`/bin/rm` is `rm`). Words whose value is only known at run time (`$X`, `$(…)`)
 * are kept with `literal: false`. Pure and synchronous.
 */
import type { SgNode } from '@ast-grep/napi';
import { astGrep, astGrepLanguage } from '../structural/ast-languages.js';

/** One word of a command as bash would pass it. */
export interface ShellWord {
  /** The value after quote removal (for a non-literal word: its source text). */
  value: string;
  /** False when expansions make the value known only at run time. */
  literal: boolean;
  /** The word as written. */
  source: string;
}

/** Where a command's standard input comes from. */
export type StdinSource = 'inherit' | 'pipe' | 'heredoc' | 'herestring';

/** One simple command that would run. */
export interface SimpleCommand {
  /** The resolved command name (basename of the program; `''` when there is none). */
  name: string;
  /** The resolved command's arguments. */
  args: ShellWord[];
  /** The name is computed at run time (`$X -rf /`, `$(which rm)`). */
  dynamicName: boolean;
  /** Wrappers that were looked through, outermost first (`['sudo', 'env']`). */
  via: string[];
  /** Set when the arguments come from standard input too (`xargs`). */
  argsFromInput: boolean;
  /** `env -S STRING`: a command line `env` itself would split and run. */
  splitString?: ShellWord;
  stdin: StdinSource;
  /** For a piped command: the resolved names of the commands before it in the pipeline. */
  upstream?: string[];
  /** The heredoc / herestring text fed to stdin, and whether it is fully literal. */
  stdinText?: ShellWord;
  redirects: Array<{ op: string; target: ShellWord }>;
  /** The command as written (wrappers included). */
  source: string;
}

/** A shell function defined on the line, with the names its body calls. */
export interface ShellFunction {
  name: string;
  calls: string[];
  /** The body backgrounds or pipes something (the shape of a fork bomb when it recurses). */
  spawns: boolean;
}

/** The result of {@link parseShell}. */
export type ParsedShell =
  { ok: true; commands: SimpleCommand[]; functions: ShellFunction[] } | { ok: false; why: string };

/** Parses a command line; `ok: false` when bash's grammar does not accept it. */
export function parseShell(text: string): ParsedShell {
  const root = astGrep().parse(astGrepLanguage('bash'), text).root();
  const broken = findBroken(root);
  if (broken) return { ok: false, why: broken };
  const commands: SimpleCommand[] = [];
  const functions: ShellFunction[] = [];
  walk(root, commands, functions);
  return { ok: true, commands, functions };
}

function findBroken(node: SgNode): string | undefined {
  if (node.kind() === 'ERROR') return `it does not parse near ${JSON.stringify(node.text().slice(0, 40))}`;
  // tree-sitter inserts zero-width MISSING nodes for tokens it had to invent (`ls &&`).
  if (node.isNamed() && node.isLeaf() && node.text() === '' && !String(node.kind()).startsWith('heredoc_'))
    return `it is incomplete (a ${node.kind()} is missing)`;
  for (const child of node.children()) {
    const found = findBroken(child);
    if (found) return found;
  }
  return undefined;
}

function walk(node: SgNode, commands: SimpleCommand[], functions: ShellFunction[]): void {
  const kind = node.kind();
  if (kind === 'command') commands.push(simpleCommand(node));
  if (kind === 'function_definition') functions.push(functionOf(node));
  for (const child of node.children()) walk(child, commands, functions);
}

function functionOf(node: SgNode): ShellFunction {
  const name = node.field('name')?.text() ?? '';
  const calls: string[] = [];
  let spawns = false;
  const visit = (n: SgNode): void => {
    if (n.kind() === 'command') {
      const w = n.field('name');
      if (w) calls.push(wordOf(w).value);
    }
    if (n.kind() === 'pipeline' || n.kind() === '&') spawns = true;
    n.children().forEach(visit);
  };
  const body = node.field('body');
  if (body) visit(body);
  return { name, calls, spawns };
}

function simpleCommand(node: SgNode): SimpleCommand {
  const words: ShellWord[] = [];
  const redirects: SimpleCommand['redirects'] = [];
  let stdinText: ShellWord | undefined;
  let stdin: StdinSource = 'inherit';
  for (const child of node.children()) {
    const k = String(child.kind());
    if (k === 'command_name') words.push(wordOf(child));
    else if (k === 'variable_assignment') continue;
    else if (k === 'file_redirect') redirects.push(redirectOf(child));
    else if (k === 'herestring_redirect') {
      stdin = 'herestring';
      const target = child.namedChildren()[0];
      if (target) stdinText = wordOf(target);
    } else if (child.isNamed() && !k.endsWith('_redirect')) words.push(wordOf(child));
  }
  // Redirections written after the command belong to its redirected_statement.
  const parent = node.parent();
  if (parent?.kind() === 'redirected_statement') {
    for (const r of parent.children()) {
      if (r.kind() === 'file_redirect') redirects.push(redirectOf(r));
      if (r.kind() === 'herestring_redirect') {
        stdin = 'herestring';
        const target = r.namedChildren()[0];
        if (target) stdinText = wordOf(target);
      }
      if (r.kind() === 'heredoc_redirect' && !r.children().some((c) => c.id() === node.id())) {
        stdin = 'heredoc';
        const body = r.children().find((c) => c.kind() === 'heredoc_body');
        stdinText = body ? heredocWord(body) : { value: '', literal: true, source: '' };
      }
    }
  }
  const upstream = pipedFrom(node);
  if (upstream) stdin = 'pipe';
  const resolved = unwrapCommand(words);
  return {
    ...resolved,
    stdin,
    ...(upstream ? { upstream } : {}),
    ...(stdinText ? { stdinText } : {}),
    redirects,
    source: node.text()
  };
}

/**
 * When the command reads a pipe (a `|` comes before it, directly or via its
 * redirected_statement): the resolved names of the commands that feed it.
 */
function pipedFrom(node: SgNode): string[] | undefined {
  let n: SgNode | null = node;
  for (let i = 0; i < 2 && n; i++) {
    const before = n.prevAll();
    if (before.some((s) => s.kind() === '|' || s.kind() === '|&') && n.parent()?.kind() === 'pipeline') {
      const names: string[] = [];
      const feeders = [...before];
      // `cat <<EOF | sh`: the pipeline sits inside the heredoc redirect of the first command.
      const heredocOwner =
        n.parent()?.parent()?.kind() === 'heredoc_redirect' ? n.parent()?.parent()?.parent()?.field('body') : null;
      if (heredocOwner) feeders.push(heredocOwner);
      for (const f of feeders)
        f.findAll({ rule: { kind: 'command' } })
          .concat(f.kind() === 'command' ? [f] : [])
          .forEach((c) => {
            const w = c.field('name');
            if (w)
              names.push(
                unwrapCommand([
                  wordOf(w),
                  ...c
                    .children()
                    .filter((x) => x.isNamed() && x.kind() !== 'command_name' && !String(x.kind()).endsWith('redirect'))
                    .map(wordOf)
                ]).name
              );
          });
      return names;
    }
    n = n.parent()?.kind() === 'redirected_statement' ? n.parent() : null;
  }
  return undefined;
}

function heredocWord(body: SgNode): ShellWord {
  const literal = !body.children().some((c) => EXPANSIONS.has(String(c.kind())));
  return { value: body.text(), literal, source: body.text() };
}

function redirectOf(node: SgNode): { op: string; target: ShellWord } {
  const op =
    node
      .children()
      .find((c) => !c.isNamed())
      ?.text() ?? '>';
  const dest =
    node.field('destination') ??
    node
      .namedChildren()
      .filter((c) => c.kind() !== 'file_descriptor')
      .at(-1);
  return { op, target: dest ? wordOf(dest) : { value: '', literal: true, source: '' } };
}

const EXPANSIONS = new Set([
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion'
]);

/** A word node's value as bash would pass it, when it is known before running. */
export function wordOf(node: SgNode): ShellWord {
  const source = node.text();
  const value = literalValue(node);
  return value === undefined ? { value: source, literal: false, source } : { value, literal: true, source };
}

function literalValue(node: SgNode): string | undefined {
  switch (node.kind()) {
    case 'command_name': {
      const inner = node.namedChildren();
      return inner.length === 1 ? literalValue(inner[0]!) : undefined;
    }
    case 'word':
      return node.text().replace(/\\\n/g, '').replace(/\\(.)/gs, '$1');
    case 'number':
      return node.text();
    case 'raw_string':
      return node.text().slice(1, -1);
    case 'ansi_c_string':
      return decodeAnsiC(node.text().slice(2, -1));
    case 'string': {
      let out = '';
      for (const part of node.children()) {
        if (!part.isNamed()) continue;
        if (part.kind() !== 'string_content') return undefined;
        out += part
          .text()
          .replace(/\\\n/g, '')
          .replace(/\\([\\"$`])/g, '$1');
      }
      return out;
    }
    case 'concatenation': {
      let out = '';
      for (const part of node.children()) {
        const v = literalValue(part);
        if (v === undefined) return undefined;
        out += v;
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** Decodes the body of `$'…'` (bash's ANSI-C quoting). */
function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
    '?': '?'
  };
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_, esc: string) => {
      if (/^[xuU]/.test(esc)) return String.fromCodePoint(parseInt(esc.slice(1), 16));
      if (/^[0-7]/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
      if (esc.startsWith('c')) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return simple[esc] ?? `\\${esc}`;
    }
  );
}

/**
 * Wrappers that run the rest of their words as a command: option letters that take an
 * argument, long options that take one as the next word, and positionals before the command.
 */
const WRAPPERS: Record<string, { argOpts: string; longArgOpts?: string[]; positionals?: number; noRun?: string }> = {
  command: { argOpts: '', noRun: 'vV' },
  builtin: { argOpts: '' },
  exec: { argOpts: 'a' },
  nohup: { argOpts: '' },
  nice: { argOpts: 'n', longArgOpts: ['--adjustment'] },
  time: { argOpts: 'fo', longArgOpts: ['--format', '--output'] },
  timeout: { argOpts: 'sk', longArgOpts: ['--signal', '--kill-after'], positionals: 1 },
  stdbuf: { argOpts: 'ioe', longArgOpts: ['--input', '--output', '--error'] },
  ionice: { argOpts: 'cnp', longArgOpts: ['--class', '--classdata', '--pid'] },
  setsid: { argOpts: '' },
  unbuffer: { argOpts: '' },
  busybox: { argOpts: '' },
  chroot: { argOpts: '', longArgOpts: ['--userspec', '--groups'], positionals: 1 },
  watch: { argOpts: 'n', longArgOpts: ['--interval'] },
  sudo: {
    argOpts: 'ugpCDhRTUr',
    longArgOpts: [
      '--user',
      '--group',
      '--prompt',
      '--close-from',
      '--chdir',
      '--host',
      '--chroot',
      '--command-timeout',
      '--other-user',
      '--role',
      '--type'
    ],
    noRun: 'lvVkK'
  },
  doas: { argOpts: 'uC' },
  xargs: {
    argOpts: 'IEdLnPsaR',
    longArgOpts: [
      '--max-args',
      '--max-procs',
      '--replace',
      '--delimiter',
      '--arg-file',
      '--max-lines',
      '--max-chars',
      '--eof',
      '--process-slot-var'
    ]
  }
};

/** Looks through wrappers and paths to the command that really runs. */
export function unwrapCommand(
  words: readonly ShellWord[]
): Pick<SimpleCommand, 'name' | 'args' | 'dynamicName' | 'via' | 'argsFromInput' | 'splitString'> {
  const via: string[] = [];
  let rest = [...words];
  let argsFromInput = false;
  let splitString: ShellWord | undefined;
  for (let guard = 0; guard < 32 && rest.length > 0; guard++) {
    const head = rest[0]!;
    if (!head.literal) return { name: '', args: rest.slice(1), dynamicName: true, via, argsFromInput };
    const name = basename(head.value);
    const spec = WRAPPERS[name];
    if (name !== 'env' && !spec)
      return {
        name,
        args: rest.slice(1),
        dynamicName: false,
        via,
        argsFromInput,
        ...(splitString ? { splitString } : {})
      };
    let i = 1;
    let stop = false;
    if (name === 'env') {
      for (; i < rest.length; i++) {
        const w = rest[i]!;
        if (!w.literal) break;
        const v = w.value;
        if (v === '--') {
          i++;
          break;
        }
        if (/^(-u|--unset|-C|--chdir)$/.test(v)) i++;
        else if (/^(-S|--split-string)$/.test(v)) splitString = rest[++i];
        else if (/^-S./.test(v)) splitString = { ...w, value: v.slice(2) };
        else if (v.startsWith('--split-string=')) splitString = { ...w, value: v.slice('--split-string='.length) };
        else if (v.startsWith('-') && v !== '-') continue;
        else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(v)) continue;
        else break;
      }
    } else {
      let positionals = spec!.positionals ?? 0;
      for (; i < rest.length; i++) {
        const w = rest[i]!;
        const v = w.value;
        if (w.literal && v === '--') {
          i++;
          break;
        }
        if (w.literal && v.startsWith('--')) {
          if (!v.includes('=') && spec!.longArgOpts?.includes(v)) i++;
          continue;
        }
        if (w.literal && v.startsWith('-') && v.length > 1) {
          for (let j = 1; j < v.length; j++) {
            const letter = v[j]!;
            if (spec!.noRun?.includes(letter)) stop = true;
            if (spec!.argOpts.includes(letter)) {
              if (j === v.length - 1) i++;
              break;
            }
          }
          continue;
        }
        if (name === 'nice' && /^-\d+$/.test(v)) continue;
        if (positionals > 0) {
          positionals--;
          continue;
        }
        break;
      }
    }
    if (stop || (i >= rest.length && !splitString))
      return { name, args: rest.slice(1), dynamicName: false, via, argsFromInput };
    via.push(name);
    if (name === 'xargs') argsFromInput = true;
    rest = rest.slice(i);
  }
  if (splitString) return { name: '', args: rest, dynamicName: false, via, argsFromInput, splitString };
  return { name: '', args: [], dynamicName: false, via, argsFromInput };
}

function basename(program: string): string {
  const trimmed = program.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}
