/**
 * What a person's answer to an approval card decides: the call, and every per-file check
 * inside it. A table of answers (once / always / deny) × the write and exec tools, each on
 * the default policy (no allow rule written first), says what runs and what is written;
 * then the per-file gate under a person's `ask` rule, deny rules still winning over an
 * answer, "Always" on a multi-file call, and a call emptied by the policy counted as withheld.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { builtinTools } from '../../src/tools/index.js';
import { createNotebookTools } from '../../src/tools/notebook/notebook.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { codeCell, notebookJson } from '../structural/fixture.js';
import { tempDir } from '../helpers/temp.js';
import { answeringPerson, type ApprovalAnswer } from '../helpers/answering-person.js';

const audits: AuditLog[] = [];
afterEach(async () => {
  await Promise.all(audits.splice(0).map((a) => a.flush()));
});

/** A registry wired like the server's; the "person" answers every approval card with `answer`. */
async function harness(answer: ApprovalAnswer, files: Record<string, string> = {}, rules: unknown[] = []) {
  const ws = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(ws, name)), { recursive: true });
    await writeFile(path.join(ws, name), text);
  }
  if (rules.length) {
    await mkdir(path.join(ws, '.cellmate'), { recursive: true });
    await writeFile(path.join(ws, '.cellmate', 'policy.json'), JSON.stringify({ rules }));
  }
  const { broker, cards, approvals } = answeringPerson(answer);
  const audit = new AuditLog(ws);
  audits.push(audit);
  const policy = new PolicyStore({
    workspace: ws,
    env: { HOME: path.join(ws, 'home'), CELLMATE_TRUSTED_WORKSPACES: ws }
  });
  const tools = [
    ...builtinTools({ questions: broker }),
    ...createNotebookTools({ port: { find: async () => undefined } })
  ];
  const registry = new ToolRegistry(tools, { policy, approvals: broker, audit });
  const ctx = {
    workspace: ws,
    signal: new AbortController().signal,
    actor: 'model' as const,
    chatId: 'chat1',
    turnId: 'turn1'
  };
  const read = (f: string): Promise<string | undefined> => readFile(path.join(ws, f), 'utf8').catch(() => undefined);
  return { ws, registry, ctx, cards, read, audit, policy, approvals };
}

const NOTEBOOK = notebookJson([codeCell('c1', 'x = load_data(1)'), codeCell('c2', 'print(x)')]);
const FILES = {
  'a.txt': 'one\ntwo\n',
  'pkg/util.py': 'def f():\n    return load_data(2)\n',
  'analysis.ipynb': NOTEBOOK
};

/** One write or exec tool: its call, and what it leaves on disk when it runs. */
interface Row {
  tool: string;
  args: Record<string, unknown>;
  /** Checks the workspace after the call; `ran` says whether the call was let through. */
  check(read: (f: string) => Promise<string | undefined>, ran: boolean): Promise<void>;
}

const ROWS: Row[] = [
  {
    tool: 'write',
    args: { path: 'new.txt', content: 'hello\n' },
    check: async (read, ran) => expect(await read('new.txt')).toBe(ran ? 'hello\n' : undefined)
  },
  {
    tool: 'edit',
    args: { path: 'a.txt', old_string: 'two', new_string: 'deux' },
    check: async (read, ran) => expect(await read('a.txt')).toBe(ran ? 'one\ndeux\n' : 'one\ntwo\n')
  },
  {
    tool: 'apply_patch',
    args: { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+zwei\n' },
    check: async (read, ran) => expect(await read('a.txt')).toBe(ran ? 'one\nzwei\n' : 'one\ntwo\n')
  },
  {
    tool: 'notebook_edit',
    args: { path: 'analysis.ipynb', edits: [{ action: 'replace', cell_id: 'c2', source: 'print(x * 2)' }] },
    check: async (read, ran) => {
      const cells = (JSON.parse((await read('analysis.ipynb'))!) as { cells: Array<{ source: string | string[] }> })
        .cells;
      expect([cells[1]!.source].flat().join('')).toBe(ran ? 'print(x * 2)' : 'print(x)');
    }
  },
  {
    tool: 'shell',
    args: { command: 'echo ran > shell.txt' },
    check: async (read, ran) => expect(await read('shell.txt')).toBe(ran ? 'ran\n' : undefined)
  },
  {
    // Staging writes nothing; what the answer decides is whether both files are staged.
    tool: 'ast_edit',
    args: { pattern: 'load_data($A)', rewrite: 'read_rows($A)' },
    check: async (read) => {
      expect(await read('pkg/util.py')).toBe(FILES['pkg/util.py']);
      expect(await read('analysis.ipynb')).toBe(NOTEBOOK);
    }
  }
];

const ALLOWS: Record<string, string> = {
  write: 'write on new.txt',
  edit: 'edit on a.txt',
  apply_patch: 'apply_patch on a.txt',
  notebook_edit: 'notebook_edit on analysis.ipynb',
  shell: 'shell: echo ran',
  ast_edit: 'ast_edit on the whole workspace'
};

/** What the card's line under its question says: the subject in words, then why it asks. */
const CONTEXTS: Record<string, string> = {
  write: 'new.txt — write-tier tools ask by default',
  edit: 'a.txt — write-tier tools ask by default',
  apply_patch: 'a.txt — write-tier tools ask by default',
  notebook_edit: 'analysis.ipynb — write-tier tools ask by default',
  shell: 'echo ran — exec-tier tools ask by default',
  ast_edit: 'the whole workspace — write-tier tools ask by default'
};

const PREVIEWS: Record<string, unknown> = {
  write: { summary: 'write · new.txt (new file)', files: [{ path: 'new.txt', diff: '@@ -1,0 +1,1 @@\n+hello' }] },
  edit: { summary: 'edit · a.txt', files: [{ path: 'a.txt', diff: '@@ -1,2 +1,2 @@\n one\n-two\n+deux' }] },
  apply_patch: {
    summary: 'apply_patch · a.txt',
    files: [{ path: 'a.txt', diff: '@@ -1,2 +1,2 @@\n one\n-two\n+zwei' }]
  },
  notebook_edit: {
    summary: 'notebook_edit · analysis.ipynb cell 2',
    files: [
      {
        path: 'analysis.ipynb',
        cells: [{ index: 1, id: 'c2', diff: '@@ -1,1 +1,1 @@\n-print(x)\n+print(x * 2)', note: 'outputs cleared' }]
      }
    ]
  }
};

describe('answers × tools: what runs and what is written (default policy, no allow rule)', () => {
  for (const row of ROWS) {
    for (const answer of ['once', 'always', 'deny'] as const) {
      it(`${row.tool} answered "${answer}"`, async () => {
        const h = await harness(answer, FILES);
        const result = await h.registry.call(row.tool, row.args, h.ctx);
        expect(h.approvals()).toHaveLength(1);
        expect(h.approvals()[0]!.approval!.tool).toBe(row.tool);
        // The card says in words what "Always" would allow: no escaped glob.
        expect(h.approvals()[0]!.approval!.allows).toBe(ALLOWS[row.tool]);
        // HARN-6: and what it asks about, never the workspace root's bare ".".
        expect(h.approvals()[0]!.context).toBe(CONTEXTS[row.tool]);
        // The card shows the change itself where a tool can say it without writing.
        expect(h.approvals()[0]!.approval!.preview).toEqual(PREVIEWS[row.tool]);
        const ran = answer !== 'deny';
        expect(result.ok, result.output).toBe(ran);
        await row.check(h.read, ran);
        if (row.tool === 'ast_edit' && ran) {
          // The answer covers both files the walk finds: nothing is withheld.
          expect(result.output).toMatch(/^\(proposed\) 2 replacements in 2 files \(1 notebook\)/);
          expect(result.output).not.toMatch(/withheld/);
        }
        // "Always" is remembered: the same call asks no second question.
        const again = await h.registry.call(row.tool, row.args, h.ctx);
        expect(h.approvals()).toHaveLength(answer === 'always' ? 1 : 2);
        if (answer === 'always' && row.tool === 'ast_edit')
          expect(again.output).toMatch(/^\(proposed\) 2 replacements in 2 files/);
      });
    }
  }

  it('ast_edit then resolve, each answered "Approve once": both files are written', async () => {
    const h = await harness('once', FILES);
    const staged = await h.registry.call('ast_edit', { pattern: 'load_data($A)', rewrite: 'read_rows($A)' }, h.ctx);
    const editId = (staged.ok && (staged.metadata?.editId as string)) || '';
    expect(editId).not.toBe('');
    const written = await h.registry.call('resolve', { edit_id: editId, action: 'accept' }, h.ctx);
    expect(written.ok, written.output).toBe(true);
    expect(h.approvals().map((c) => c.approval!.tool)).toEqual(['ast_edit', 'resolve']);
    expect(await h.read('pkg/util.py')).toBe('def f():\n    return read_rows(2)\n');
    expect(await h.read('analysis.ipynb')).toContain('read_rows(1)');
  });

  it('"Always" on a multi-file resolve remembers every file it asked about', async () => {
    const h = await harness('always', FILES);
    const staged = await h.registry.call('ast_edit', { pattern: 'load_data($A)', rewrite: 'read_rows($A)' }, h.ctx);
    await h.registry.call(
      'resolve',
      { edit_id: staged.ok ? (staged.metadata!.editId as string) : '', action: 'accept' },
      h.ctx
    );
    const resolveCard = h.approvals().find((c) => c.approval!.tool === 'resolve')!;
    expect(resolveCard.approval!.pattern.split(', ').sort()).toEqual(['/analysis.ipynb', '/pkg/util.py']);
    const rules = await h.policy.rules();
    expect(
      rules
        .filter((r) => r.tool === 'resolve')
        .map((r) => r.pattern)
        .sort()
    ).toEqual(['/analysis.ipynb', '/pkg/util.py']);
  });
});

describe('the per-file gate follows the answer', () => {
  it('a deny rule still withholds its file after "Approve once"; the rest is staged', async () => {
    const h = await harness('once', FILES, [{ tool: '*', pattern: 'analysis.ipynb', action: 'deny' }]);
    const result = await h.registry.call('ast_edit', { pattern: 'load_data($A)', rewrite: 'read_rows($A)' }, h.ctx);
    expect(result.output).toMatch(/^\(proposed\) 1 replacement in 1 file —/);
    expect(result.output).toContain('(1 file withheld');
  });

  it('after "Approve once", a language server\'s or walk\'s file a deny rule covers is refused; others pass', async () => {
    const h = await harness('once', FILES, [
      { tool: 'grep', pattern: '*', action: 'ask' },
      { tool: 'grep', pattern: 'a.txt', action: 'deny' }
    ]);
    const result = await h.registry.call('grep', { pattern: 'load_data|one' }, h.ctx);
    expect(h.approvals()).toHaveLength(1);
    expect(result.output).toMatch(/2 matches/);
    expect(result.output).toContain('pkg/util.py:2:');
    expect(result.output).toContain('analysis.ipynb');
    expect(result.output).toContain('(1 file withheld');
  });

  for (const [tool, args, found] of [
    ['grep', { pattern: 'load_data' }, /2 matches/],
    ['glob', { pattern: '**/*.py' }, /pkg\/util\.py/],
    ['ast_grep', { pattern: 'load_data($A)', language: 'python' }, /pkg\/util\.py/]
  ] as const) {
    it(`${tool} under a person's ask rule, answered "Approve once": nothing is withheld`, async () => {
      const h = await harness('once', FILES, [{ tool, pattern: '*', action: 'ask' }]);
      const result = await h.registry.call(tool, args, h.ctx);
      expect(h.approvals()).toHaveLength(1);
      expect(result.ok, result.output).toBe(true);
      expect(result.output).toMatch(found);
      expect(result.output).not.toMatch(/withheld/);
    });
  }

  it('a read tool the rules alone let through still withholds files an ask rule covers (nobody approved them)', async () => {
    const h = await harness('once', FILES, [{ tool: '*', pattern: 'pkg', action: 'ask' }]);
    const result = await h.registry.call('glob', { pattern: '**/*.py' }, h.ctx);
    expect(h.approvals()).toHaveLength(0);
    expect(result).toMatchObject({ ok: true, outcome: 'withheld' });
    expect(result.output).toContain('(1 file withheld');
  });

  it('a call that changed nothing because files were withheld is counted as withheld, not success', async () => {
    const h = await harness('once', FILES, [
      { tool: '*', pattern: 'pkg', action: 'deny' },
      { tool: '*', pattern: 'analysis.ipynb', action: 'deny' }
    ]);
    const result = await h.registry.call('ast_edit', { pattern: 'load_data($A)', rewrite: 'read_rows($A)' }, h.ctx);
    expect(result).toMatchObject({ ok: true, outcome: 'withheld', title: 'ast_edit: nothing to change' });
    await h.registry.call('write', { path: 'new.txt', content: 'x' }, h.ctx);
    await h.audit.flush();
    const rows = (await h.audit.metrics('chat1')).rows;
    expect(rows.find((r) => r.tool === 'ast_edit')).toMatchObject({ calls: 1, ok: 0, withheld: 1, successRate: 0 });
    expect(rows.find((r) => r.tool === 'write')).toMatchObject({ calls: 1, ok: 1, withheld: 0 });
  });
});
