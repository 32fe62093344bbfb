/**
 * What a review reads first (SPEC MODE-4, `review/start`): the workspace's `git diff`
 * against HEAD (bounded; untracked files listed, not inlined), or one notebook's cells as
 * saved on disk. The text becomes the review chat's first user message; `files` are what
 * the axes check. Git runs with the repository's own command hooks switched off
 * (`--no-ext-diff`, `--no-textconv`, `core.fsmonitor=false`, and every configured filter
 * driver's `clean`/`smudge`/`process` emptied — `git diff` runs a tracked file's clean filter
 * otherwise): starting a review must not run code a cloned repository's config names.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { childEnv } from '../../security/child-env.js';
import { parseNotebook, sourceText, cellRef } from '../../notebooks/ipynb.js';

const run = promisify(execFile);

/** The diff text kept in the first message (characters); the rest is cut with a note. */
export const MAX_DIFF_CHARS = 60_000;
/** Untracked files listed. */
const MAX_UNTRACKED = 200;
/** Git's empty tree: the base of a repository without commits. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A review that cannot start (not a repository, nothing changed, not a notebook): the pane shows the message. */
export class ReviewScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReviewScopeError';
  }
}

/** What a review covers, ready for the first message. */
export interface CollectedScope {
  /** e.g. `git diff (3 files, 1 untracked)`. */
  label: string;
  /** The material for the first message. */
  text: string;
  /** Workspace-relative changed files (the axes check them). */
  files: string[];
}

async function git(workspace: string, env: NodeJS.ProcessEnv, args: string[], signal?: AbortSignal): Promise<string> {
  const { stdout } = await run(
    'git',
    [
      '-c',
      'core.fsmonitor=false',
      '-c',
      'core.quotepath=off',
      ...(await filterOverrides(workspace, env, signal)),
      ...args
    ],
    {
      cwd: workspace,
      env: { ...childEnv(env), GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 60_000,
      encoding: 'utf8',
      ...(signal ? { signal } : {})
    }
  );
  return stdout;
}

/**
 * `-c` overrides that empty every filter driver any config level names (the repository's
 * `.git/config` and whatever it includes), read with `git config --get-regexp` — itself a
 * read that runs nothing. Empty commands mean "no filter"; `required=false` keeps git from
 * failing on a driver it then cannot run. Driver names may contain dots: the variable is
 * the last part of the key.
 */
async function filterOverrides(workspace: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string[]> {
  let listed = '';
  try {
    ({ stdout: listed } = await run('git', ['config', '--null', '--get-regexp', '^filter\\.'], {
      cwd: workspace,
      env: { ...childEnv(env), GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' },
      timeout: 60_000,
      encoding: 'utf8',
      ...(signal ? { signal } : {})
    }));
  } catch {
    return []; // exit 1: no filter configured
  }
  const drivers = new Set<string>();
  for (const entry of listed.split('\0')) {
    const key = entry.split('\n')[0]!;
    const dot = key.lastIndexOf('.');
    if (key.startsWith('filter.') && dot > 'filter.'.length) drivers.add(key.slice('filter.'.length, dot));
  }
  return [...drivers].flatMap((d) =>
    ['clean', 'smudge', 'process']
      .flatMap((v) => ['-c', `filter.${d}.${v}=`])
      .concat(['-c', `filter.${d}.required=false`])
  );
}

/**
 * The workspace's changes against HEAD (staged and unstaged), plus the untracked files'
 * names. Files `allowed` refuses (the policy's read rules: `.env`, secrets) are left out of
 * the diff and the lists, and the message says how many.
 */
export async function collectGitDiff(
  workspace: string,
  env: NodeJS.ProcessEnv,
  allowed: (relative: string) => Promise<boolean> = async () => true,
  signal?: AbortSignal
): Promise<CollectedScope> {
  try {
    await git(workspace, env, ['rev-parse', '--is-inside-work-tree'], signal);
  } catch {
    throw new ReviewScopeError(
      'Nothing to review: the workspace is not inside a git repository. Open a notebook and review it instead, or run `git init` and commit a baseline.'
    );
  }
  const base = await git(workspace, env, ['rev-parse', '--verify', '--quiet', 'HEAD'], signal).then(
    () => 'HEAD',
    () => EMPTY_TREE
  );
  const common = ['--no-color', '--no-ext-diff', '--no-textconv', '--relative'];
  const [names, untracked] = await Promise.all([
    git(workspace, env, ['diff', ...common, '--name-only', base, '--', '.'], signal),
    git(workspace, env, ['ls-files', '--others', '--exclude-standard', '--', '.'], signal)
  ]);
  const keep = async (list: string[]): Promise<string[]> => {
    const ok = await Promise.all(list.map((f) => allowed(f)));
    return list.filter((_f, i) => ok[i]);
  };
  const allChanged = names.split('\n').filter(Boolean);
  // Cellmate's own state (chats, plans, reviews, outputs) and Jupyter's checkpoint copies are never part of the change.
  const allFresh = untracked
    .split('\n')
    .filter((f) => f && !f.startsWith('.cellmate/') && !/(^|\/)\.ipynb_checkpoints\//.test(f));
  const changed = await keep(allChanged);
  const fresh = await keep(allFresh);
  const withheld = allChanged.length + allFresh.length - changed.length - fresh.length;
  if (changed.length === 0 && fresh.length === 0) {
    throw new ReviewScopeError(
      withheld
        ? `Nothing to review: the only changed files (${withheld}) are ones the policy does not let the agent read.`
        : `Nothing to review: git diff ${base === 'HEAD' ? 'against HEAD ' : ''}is empty and there are no untracked files.`
    );
  }
  const diff = changed.length ? await git(workspace, env, ['diff', ...common, base, '--', ...changed], signal) : '';
  const cut =
    diff.length > MAX_DIFF_CHARS
      ? `${diff.slice(0, MAX_DIFF_CHARS)}\n[… diff cut at ${MAX_DIFF_CHARS} of ${diff.length} characters: read the changed files for the rest]\n`
      : diff;
  const label = `git diff (${changed.length} file${changed.length === 1 ? '' : 's'}${fresh.length ? `, ${fresh.length} untracked` : ''})`;
  const parts = [
    `Review these changes: the workspace's git diff against ${base === 'HEAD' ? 'HEAD' : 'an empty repository (no commit yet)'}, staged and unstaged${changed.length ? `, ${changed.length} changed file${changed.length === 1 ? '' : 's'}` : ''}.`,
    ...(changed.length ? ['', `Changed files: ${changed.join(', ')}`, '', '```diff', cut.trimEnd(), '```'] : []),
    ...(withheld
      ? [
          '',
          `(${withheld} changed file${withheld === 1 ? ' is' : 's are'} left out: the policy does not let the agent read ${withheld === 1 ? 'it' : 'them'}.)`
        ]
      : []),
    ...(fresh.length
      ? [
          '',
          `Untracked files (new, not in the diff; read them if they matter):`,
          ...fresh.slice(0, MAX_UNTRACKED).map((f) => `- ${f}`),
          ...(fresh.length > MAX_UNTRACKED ? [`- … and ${fresh.length - MAX_UNTRACKED} more`] : [])
        ]
      : []),
    '',
    'Record each finding with add_review_node, then publish the verdict with finalize_review.'
  ];
  return { label, text: parts.join('\n'), files: [...changed, ...fresh.slice(0, MAX_UNTRACKED)] };
}

/** One notebook's cells (as saved), numbered as notebook_read numbers them, with their ids. */
export async function collectNotebook(absolute: string, relative: string): Promise<CollectedScope> {
  let nb;
  try {
    nb = parseNotebook(await readFile(absolute, 'utf8'));
  } catch (error) {
    throw new ReviewScopeError(`Cannot review ${relative}: ${error instanceof Error ? error.message : String(error)}.`);
  }
  const cells: string[] = [];
  let size = 0;
  const info = nb.metadata.language_info as { name?: unknown } | undefined;
  const language = typeof info?.name === 'string' ? info.name : 'python';
  for (let i = 0; i < nb.cells.length; i++) {
    const cell = nb.cells[i]!;
    const source = sourceText(cell.source);
    const block = `### cell ${i + 1} (${cell.cell_type}, id ${cellRef(nb, i)})\n\`\`\`${cell.cell_type === 'code' ? language : cell.cell_type === 'markdown' ? 'markdown' : ''}\n${source}\n\`\`\``;
    if (size + block.length > MAX_DIFF_CHARS) {
      cells.push(
        `[… cells ${i + 1}–${nb.cells.length} not shown (the first ${MAX_DIFF_CHARS} characters are): read them with notebook_read]`
      );
      break;
    }
    size += block.length;
    cells.push(block);
  }
  return {
    label: relative,
    text: [
      `Review the notebook ${relative} (${nb.cells.length} cells, as saved). Anchor findings to cells with anchor {file: "${relative}", cell: "<id or #N>", lines}.`,
      '',
      ...cells,
      '',
      'Record each finding with add_review_node, then publish the verdict with finalize_review.'
    ].join('\n'),
    files: [relative]
  };
}
