/**
 * Process-spawning and deleting calls in an `eval` cell, found on its syntax tree
 * (EVAL-5, HARN-6): `os.system`, `subprocess.*`, `shutil.rmtree`, `os.remove`,
 * `Path(…).unlink()`, `os.exec*`/`spawn*`, JS `child_process`, `fs.rm*`, `Deno.run`…,
 * through aliases (`import subprocess as sp`, `from os import system`,
 * `const { execSync } = require('child_process')`). Parsed with ast-grep (tree-sitter),
 * so string literals and comments never count. Magics are rewritten first: shell magics
 * become `__cellmate__.sh(…)`, which the kernel sends through the shell gate at run time.
 *
 * Each call becomes a shell-like subject: the command when it is a literal
 * (`os.system("rm -rf x")` → `rm -rf x`, `subprocess.run(["ls", "-l"])` → `ls -l`), the
 * equivalent command for deletes (`shutil.rmtree("x")` → `rm -rf x`), else the call's own
 * text. This is a tripwire for the obvious spellings, not a sandbox: code can always
 * build a call the tree does not show (the README says so).
 */
import type { SgNode } from '@ast-grep/napi';
import { rewriteMagics } from '@cellmate/kernel-bridge';
import { astGrep, astGrepLanguage } from '../../structural/ast-languages.js';

/** One call the cell makes that spawns a process, deletes files or runs code built at run time. */
export interface ProcessCall {
  /** The API as resolved through imports, e.g. `subprocess.run`, `child_process.execSync`. */
  api: string;
  kind: 'spawn' | 'delete' | 'dynamic-code';
  /** The shell-like subject the policy judges (see the module comment). */
  subject: string;
}

const MAX_SUBJECT = 300;
const MAX_DEPTH = 3;

/**
 * Every finding needs one of these words in the (rewritten) cell's text: the API's module or
 * function name, an import of it, or a delete method's name — aliases come from imports,
 * `__import__`/`require`/`import()` and `getattr` of a module that the text names too. A
 * cell without any is not parsed (most small cells: `df.head()`, `x = 1`); a cell with one
 * is scanned in full, so a false alarm of the filter only costs the parse. Python folds
 * non-ASCII identifiers (NFKC: `ｏｓ` is `os`) and JavaScript allows escapes in identifiers
 * (`\u0065val`): a cell with a non-ASCII character or a backslash-u is always scanned.
 */
export const PY_WORDS =
  /os|subprocess|pty|asyncio|platform|commands|shutil|posix|exec|eval|compile|unlink|rmdir|rmtree/;
export const JS_WORDS = /eval|Function|vm|require|import|child_process|Deno|Bun|process|rm|unlink/;

/** Whether a cell can contain a call {@link findProcessCalls} reports (false: it cannot). */
export function mayHaveProcessCalls(rewritten: string, language: 'python' | 'javascript'): boolean {
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]|\\u/.test(rewritten)) return true;
  return (language === 'python' ? PY_WORDS : JS_WORDS).test(rewritten);
}

/** The process-spawning, deleting and dynamic-code calls of a cell (after magic rewriting). */
export function findProcessCalls(code: string, language: 'python' | 'javascript', depth = 0): ProcessCall[] {
  const rewritten = rewriteMagics(code, language).code;
  return mayHaveProcessCalls(rewritten, language) ? scanProcessCalls(rewritten, language, depth) : [];
}

/** {@link findProcessCalls} on rewritten code without the word filter (exported for its soundness test). */
export function scanProcessCalls(rewritten: string, language: 'python' | 'javascript', depth = 0): ProcessCall[] {
  try {
    if (language === 'python') {
      // The one registration of ast-grep's dynamic languages (a second one would be ignored).
      return new PythonScan(astGrep().parse(astGrepLanguage('python'), rewritten).root(), depth).run();
    }
    return new JsScan(astGrep().parse(astGrep().Lang.JavaScript, rewritten).root(), depth).run();
  } catch (error) {
    // A parser failure must not let the cell through unjudged.
    return [
      {
        api: `${language} parser`,
        kind: 'dynamic-code',
        subject: `eval: the cell could not be analysed (${(error as Error).message})`
      }
    ];
  }
}

const clip = (s: string): string => (s.length > MAX_SUBJECT ? `${s.slice(0, MAX_SUBJECT)}…` : s);
const quoteWord = (w: string): string => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

/** A literal as a shell word, or the expression it was not as `{expression}`. */
function literalOr(literal: string | undefined, expression: string): string {
  return literal !== undefined ? quoteWord(literal) : `{${expression}}`;
}

/** What the subject of a delete looks like as a command. */
function deleteSubject(api: string, target: string): string {
  if (/rmtree$|\.rm$|\.rmSync$|^Deno\.remove/.test(api)) return `rm -rf ${target}`;
  if (/rmdir|removedirs/.test(api)) return `rmdir ${target}`;
  return `rm ${target}`;
}

const PY_SPAWN =
  /^(os\.(system|popen|exec\w*|spawn\w*|posix_spawnp?|fork|forkpty)|subprocess\.\w+|pty\.spawn|asyncio\.create_subprocess_\w+|platform\.popen|commands\.\w+)$/;
const PY_DELETE = /^(shutil\.rmtree|os\.(remove|unlink|rmdir|removedirs))$/;
const PY_WATCHED_MODULES = /^(os|subprocess|shutil|pty|posix)$/;
const PY_WILDCARD_NAMES: Record<string, string[]> = {
  os: [
    'system',
    'popen',
    'remove',
    'unlink',
    'rmdir',
    'removedirs',
    'execv',
    'execvp',
    'execl',
    'execlp',
    'spawnv',
    'spawnl'
  ],
  subprocess: ['run', 'call', 'check_call', 'check_output', 'Popen', 'getoutput', 'getstatusoutput'],
  shutil: ['rmtree']
};

class PythonScan {
  private readonly aliases = new Map<string, string>();
  private readonly calls: ProcessCall[] = [];
  constructor(
    private readonly root: SgNode,
    private readonly depth: number
  ) {}

  run(): ProcessCall[] {
    this.collectImports();
    for (const call of this.root.findAll({ rule: { kind: 'call' } })) this.judge(call);
    // `import subprocess` with no call recognised: the module can still be used indirectly.
    for (const [local, full] of this.aliases) {
      if (/^(subprocess|pty)$/.test(full) && !this.calls.some((c) => c.api.startsWith(`${full}.`))) {
        this.calls.push({
          api: full,
          kind: 'spawn',
          subject: `python: import ${full}${local !== full ? ` as ${local}` : ''}`
        });
      }
    }
    return this.calls;
  }

  private collectImports(): void {
    for (const stmt of this.root.findAll({ rule: { kind: 'import_statement' } })) {
      for (const c of stmt.children()) {
        if (c.kind() === 'dotted_name') this.aliases.set(c.text().split('.')[0]!, c.text().split('.')[0]!);
        if (c.kind() === 'aliased_import')
          this.aliases.set(c.field('alias')?.text() ?? '', c.field('name')?.text() ?? '');
      }
    }
    for (const stmt of this.root.findAll({ rule: { kind: 'import_from_statement' } })) {
      const module = stmt.field('module_name')?.text() ?? '';
      for (const c of stmt.children()) {
        if (c.kind() === 'dotted_name' && c.text() !== module) this.aliases.set(c.text(), `${module}.${c.text()}`);
        if (c.kind() === 'aliased_import')
          this.aliases.set(c.field('alias')?.text() ?? '', `${module}.${c.field('name')?.text() ?? ''}`);
        if (c.kind() === 'wildcard_import')
          for (const n of PY_WILDCARD_NAMES[module] ?? []) this.aliases.set(n, `${module}.${n}`);
      }
    }
    // `run = subprocess.run`, `sp = __import__("subprocess")`: one pass, in order.
    for (const a of this.root.findAll({ rule: { kind: 'assignment' } })) {
      const left = a.field('left');
      const right = a.field('right');
      if (left?.kind() !== 'identifier' || !right) continue;
      const resolved = this.qualifiedName(right);
      if (resolved && PY_WATCHED_MODULES.test(resolved.split('.')[0]!)) this.aliases.set(left.text(), resolved);
    }
  }

  /** The dotted name an expression stands for, through imports and aliases. */
  private qualifiedName(node: SgNode): string | undefined {
    switch (node.kind()) {
      case 'identifier':
        return this.aliases.get(node.text()) ?? node.text();
      case 'attribute': {
        const base = this.qualifiedName(node.field('object')!);
        return base === undefined ? undefined : `${base}.${node.field('attribute')?.text() ?? ''}`;
      }
      case 'parenthesized_expression':
        return node.child(1) ? this.qualifiedName(node.child(1)!) : undefined;
      case 'call': {
        const fn = this.qualifiedName(node.field('function')!);
        const args = callArguments(node);
        if ((fn === '__import__' || fn === 'importlib.import_module') && args[0]) return pyLiteral(args[0]);
        if (fn === 'getattr' && args[0]) {
          const base = this.qualifiedName(args[0]);
          return base === undefined ? undefined : `${base}.${(args[1] && pyLiteral(args[1])) ?? '*'}`;
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private judge(call: SgNode): void {
    const fnNode = call.field('function');
    if (!fnNode) return;
    const api = this.qualifiedName(fnNode);
    const args = callArguments(call);
    const positional = args.filter((a) => a.kind() !== 'keyword_argument');
    const method = fnNode.kind() === 'attribute' ? fnNode.field('attribute')?.text() : undefined;
    if (api && (api === 'exec' || api === 'eval' || api === 'compile') && fnNode.kind() === 'identifier') {
      const source = positional[0] && pyLiteral(positional[0]);
      if (source !== undefined && this.depth < MAX_DEPTH)
        this.calls.push(...findProcessCalls(source, 'python', this.depth + 1));
      else this.calls.push({ api, kind: 'dynamic-code', subject: clip(`python: ${call.text()}`) });
      return;
    }
    if (api && PY_SPAWN.test(api)) {
      this.calls.push({
        api,
        kind: 'spawn',
        subject: clip(this.commandOf(api, positional) ?? `python: ${call.text()}`)
      });
      return;
    }
    if (api && /\.\*$/.test(api) && PY_WATCHED_MODULES.test(api.split('.')[0]!)) {
      this.calls.push({ api, kind: 'spawn', subject: clip(`python: ${call.text()}`) });
      return;
    }
    const isDelete = (api && PY_DELETE.test(api)) || method === 'unlink' || method === 'rmdir' || method === 'rmtree';
    if (!isDelete) return;
    // The target: a literal (quoted as a shell word), else `{expression}`.
    let target: string;
    if (api && PY_DELETE.test(api))
      target = literalOr(positional[0] && pyLiteral(positional[0]), positional[0]?.text() ?? '?');
    else {
      // Path("x").unlink(): the path is the constructor's literal argument when there is one.
      const obj = fnNode.field('object')!;
      const ctorArgs = obj.kind() === 'call' ? callArguments(obj) : [];
      target = literalOr(ctorArgs[0] && pyLiteral(ctorArgs[0]), obj.text());
    }
    this.calls.push({
      api: api ?? `.${method}`,
      kind: 'delete',
      subject: clip(deleteSubject(api && PY_DELETE.test(api) ? api : `.${method}`, target))
    });
  }

  /** The command line a spawn call runs, when its arguments are literals. */
  private commandOf(api: string, positional: SgNode[]): string | undefined {
    // os.execvp(file, [argv…]) / os.spawnvp(mode, file, [argv…]): the argv list.
    const list = positional.find((a) => a.kind() === 'list' || a.kind() === 'tuple');
    if (/^os\.(exec|spawn|posix_spawn)/.test(api)) return list ? pyWords(list) : undefined;
    const first = positional[0];
    if (!first) return undefined;
    if (first.kind() === 'list' || first.kind() === 'tuple') return pyWords(first);
    return pyLiteral(first);
  }
}

/** The value of a plain string literal (no f-string interpolation), else undefined. */
function pyLiteral(node: SgNode): string | undefined {
  if (node.kind() === 'concatenated_string') {
    const parts = node
      .children()
      .filter((c) => c.isNamed())
      .map(pyLiteral);
    return parts.every((p) => p !== undefined) ? parts.join('') : undefined;
  }
  if (node.kind() !== 'string') return undefined;
  const inner = node.children().filter((c) => c.kind() !== 'string_start' && c.kind() !== 'string_end');
  if (inner.some((c) => c.kind() === 'interpolation')) return undefined;
  return inner.map((c) => c.text()).join('');
}

function pyWords(list: SgNode): string | undefined {
  const words = list
    .children()
    .filter((c) => c.isNamed())
    .map(pyLiteral);
  return words.length > 0 && words.every((w) => w !== undefined)
    ? words.map((w) => quoteWord(w!)).join(' ')
    : undefined;
}

const JS_SPAWN =
  /^(child_process\.\w+|Deno\.(run|Command)|Bun\.spawn(Sync)?|process\.(binding|_linkedBinding|dlopen))$/;
const JS_DELETE_METHODS = new Set(['rm', 'rmSync', 'rmdir', 'rmdirSync', 'unlink', 'unlinkSync']);

class JsScan {
  private readonly aliases = new Map<string, string>();
  private readonly calls: ProcessCall[] = [];
  constructor(
    private readonly root: SgNode,
    private readonly depth: number
  ) {}

  run(): ProcessCall[] {
    for (const d of this.root.findAll({ rule: { kind: 'variable_declarator' } })) this.declare(d);
    for (const a of this.root.findAll({ rule: { kind: 'assignment_expression' } })) {
      const left = a.field('left');
      const right = a.field('right');
      const resolved = right && this.resolve(right);
      if (left?.kind() === 'identifier' && resolved && /^(child_process|fs|Deno|Bun)\b/.test(resolved))
        this.aliases.set(left.text(), resolved);
    }
    for (const c of this.root.findAll({ rule: { any: [{ kind: 'call_expression' }, { kind: 'new_expression' }] } }))
      this.judge(c);
    if (
      [...this.aliases.values()].includes('child_process') &&
      !this.calls.some((c) => c.api.startsWith('child_process.'))
    ) {
      this.calls.push({ api: 'child_process', kind: 'spawn', subject: 'javascript: require("child_process")' });
    }
    return this.calls;
  }

  private declare(d: SgNode): void {
    const name = d.field('name');
    const value = d.field('value');
    if (!name || !value) return;
    const resolved = this.resolve(value);
    if (!resolved) return;
    if (name.kind() === 'identifier') {
      if (resolved !== name.text()) this.aliases.set(name.text(), resolved);
      return;
    }
    if (name.kind() !== 'object_pattern') return;
    for (const p of name.children()) {
      if (p.kind() === 'shorthand_property_identifier_pattern') this.aliases.set(p.text(), `${resolved}.${p.text()}`);
      if (p.kind() === 'pair_pattern') {
        const key = p.field('key')?.text();
        const local = p.field('value');
        if (key && local?.kind() === 'identifier') this.aliases.set(local.text(), `${resolved}.${key}`);
      }
    }
  }

  private resolve(node: SgNode): string | undefined {
    switch (node.kind()) {
      case 'identifier':
        return this.aliases.get(node.text()) ?? node.text();
      case 'member_expression': {
        const base = this.resolve(node.field('object')!);
        return base === undefined ? undefined : `${base}.${node.field('property')?.text() ?? ''}`;
      }
      case 'subscript_expression': {
        const base = this.resolve(node.field('object')!);
        const index = node.field('index');
        return base === undefined ? undefined : `${base}.${(index && jsLiteral(index)) ?? '*'}`;
      }
      case 'await_expression':
      case 'parenthesized_expression': {
        const inner = node.children().find((c) => c.isNamed());
        return inner ? this.resolve(inner) : undefined;
      }
      case 'call_expression': {
        const fn = node.field('function');
        const arg = callArguments(node)[0];
        if (fn && (fn.text() === 'require' || fn.kind() === 'import') && arg) {
          const spec = jsLiteral(arg);
          return spec === undefined ? undefined : spec.replace(/^node:/, '').replace(/^fs\/promises$/, 'fs.promises');
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private judge(call: SgNode): void {
    const fnNode = call.field('function') ?? call.field('constructor');
    if (!fnNode) return;
    const api = this.resolve(fnNode);
    const args = callArguments(call);
    const method = fnNode.kind() === 'member_expression' ? fnNode.field('property')?.text() : undefined;
    if (api === 'eval' || api === 'Function' || (api && /^vm\.(runIn\w+|Script|compileFunction)$/.test(api))) {
      const source = args[0] && jsLiteral(args[0]);
      if (source !== undefined && api === 'eval' && this.depth < MAX_DEPTH)
        this.calls.push(...findProcessCalls(source, 'javascript', this.depth + 1));
      else this.calls.push({ api, kind: 'dynamic-code', subject: clip(`javascript: ${call.text()}`) });
      return;
    }
    if (fnNode.text() === 'require' && args[0] && jsLiteral(args[0]) === undefined) {
      this.calls.push({ api: 'require', kind: 'dynamic-code', subject: clip(`javascript: ${call.text()}`) });
      return;
    }
    if (api && (JS_SPAWN.test(api) || /^child_process\.\*$/.test(api))) {
      const first = args[0] && jsLiteral(args[0]);
      const list = args.find((a) => a.kind() === 'array');
      const words = list ? jsWords(list) : undefined;
      const command = first !== undefined ? [quoteWordIf(first, !!list), words].filter(Boolean).join(' ') : undefined;
      this.calls.push({ api, kind: 'spawn', subject: clip(command ?? `javascript: ${call.text()}`) });
      return;
    }
    if ((api && /^Deno\.remove(Sync)?$/.test(api)) || (method && JS_DELETE_METHODS.has(method))) {
      const target = literalOr(args[0] && jsLiteral(args[0]), args[0]?.text() ?? '?');
      const recursive = /recursive\s*:\s*true/.test(args[1]?.text() ?? '');
      const verb = recursive ? 'rm -rf' : /rmdir/.test(method ?? '') ? 'rmdir' : 'rm';
      this.calls.push({ api: api ?? `.${method}`, kind: 'delete', subject: clip(`${verb} ${target}`) });
    }
  }
}

/** `execSync("ls -l")` is a whole command line; `spawn("rm", [...])` a program name. */
function quoteWordIf(word: string, isProgram: boolean): string {
  return isProgram ? quoteWord(word) : word;
}

function jsLiteral(node: SgNode): string | undefined {
  if (node.kind() === 'string')
    return node
      .children()
      .filter((c) => c.isNamed())
      .map((c) => c.text())
      .join('');
  if (node.kind() === 'template_string') {
    const inner = node.children().filter((c) => c.isNamed());
    return inner.some((c) => c.kind() === 'template_substitution') ? undefined : inner.map((c) => c.text()).join('');
  }
  return undefined;
}

function jsWords(list: SgNode): string | undefined {
  const words = list
    .children()
    .filter((c) => c.isNamed())
    .map(jsLiteral);
  return words.length > 0 && words.every((w) => w !== undefined)
    ? words.map((w) => quoteWord(w!)).join(' ')
    : undefined;
}

/** A call's arguments (named nodes: no commas, parentheses or comments), in both languages. */
function callArguments(call: SgNode): SgNode[] {
  return (call.field('arguments')?.children() ?? []).filter((c) => c.isNamed() && c.kind() !== 'comment');
}
