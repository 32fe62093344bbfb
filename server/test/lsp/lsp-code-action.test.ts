/**
 * `lsp_code_action` on real basedpyright (SPEC LSP-4): the missing-import quick fix that
 * `lsp code_actions` offers is applied through the shared all-or-nothing edit; a stale
 * choice (the title no longer matches) and a number past the list change nothing.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLspCodeActionTool } from '../../src/tools/lsp_code_action/lsp_code_action.js';
import { lspFixture, type LspFixture } from './lsp-fixtures.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { answeringPerson } from '../helpers/answering-person.js';

const open: LspFixture[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.dispose();
});

const at = { file: 'pkg/needs_import.py', line: 3, symbol: 'dedent' };

describe('lsp_code_action (LSP-4)', () => {
  it('applies the listed missing-import fix; the file gains the import and nothing else changes', async () => {
    const f = await lspFixture(['py'], {
      flat: true,
      writeTools: true,
      extraTools: ({ docs }) => [createLspCodeActionTool(docs)]
    });
    open.push(f);
    const file = path.join(f.workspace, at.file);
    const before = await readFile(file, 'utf8');
    const listed = await f.call('lsp', { action: 'code_actions', ...at });
    expect(listed.output).toMatch(/^1\. from textwrap import dedent \[quickfix\]$/m);
    expect(listed.output).toContain('Apply one with lsp_code_action');

    const r = await f.call('lsp_code_action', { ...at, choice: 1, title: 'from textwrap import dedent' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(/^Applied "from textwrap import dedent": \d+ edits? in 1 file\.\nM pkg\/needs_import\.py/);
    const after = await readFile(file, 'utf8');
    expect(after).toContain('from textwrap import dedent');
    // Only the import was added: removing that line gives back the file as it was.
    expect(
      after
        .split('\n')
        .filter((l) => l !== 'from textwrap import dedent')
        .join('\n')
        .replace(/^\n+/, '')
    ).toBe(before.replace(/^\n+/, ''));
    const d = await f.call('lsp', { action: 'diagnostics', file: at.file });
    expect(d.output).not.toContain('"dedent" is not defined');
  }, 90_000);

  it('a title that no longer matches, or a number past the list, changes nothing and lists what is offered', async () => {
    const f = await lspFixture(['py'], {
      flat: true,
      writeTools: true,
      extraTools: ({ docs }) => [createLspCodeActionTool(docs)]
    });
    open.push(f);
    const file = path.join(f.workspace, at.file);
    const before = await readFile(file, 'utf8');
    const stale = await f.call('lsp_code_action', { ...at, choice: 1, title: 'from os import dedent' });
    expect(stale.ok).toBe(false);
    expect(stale.output).toContain('Action 1 is now "from textwrap import dedent", not "from os import dedent"');
    expect(stale.output).toContain('Nothing was changed.');
    const past = await f.call('lsp_code_action', { ...at, choice: 99 });
    expect(past.ok).toBe(false);
    expect(past.output).toMatch(
      /There is no action 99 at pkg\/needs_import\.py line 3\. The server offers now:\n1\. from textwrap import dedent/
    );
    expect(await readFile(file, 'utf8')).toBe(before);
  }, 90_000);

  it('answered "Approve once" on the default policy: the fix is written', async () => {
    const person = answeringPerson('once');
    const gate = (ws: string) => ({
      policy: new PolicyStore({
        workspace: ws,
        env: { HOME: path.join(ws, '.home'), CELLMATE_TRUSTED_WORKSPACES: ws }
      }),
      approvals: person.broker
    });
    const f = await lspFixture(['py'], {
      flat: true,
      gate,
      extraTools: ({ docs }) => [createLspCodeActionTool(docs)]
    });
    open.push(f);
    const r = await f.call('lsp_code_action', { ...at, choice: 1, title: 'from textwrap import dedent' });
    expect(person.approvals().map((c) => c.approval!.tool)).toEqual(['lsp_code_action']);
    expect(r.ok, r.output).toBe(true);
    expect(await readFile(path.join(f.workspace, at.file), 'utf8')).toContain('from textwrap import dedent');
  }, 90_000);
});
