/**
 * PolicyStore reads the policy files through a stat-keyed cache (SPEC HARN-6): an edit
 * applies to the very next call, a deleted file stops applying, a malformed one is
 * reported and contributes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { BUILTIN_RULES } from '../../src/policy/policy.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

async function workspace(): Promise<string> {
  const ws = await fs.mkdtemp(path.join(os.tmpdir(), 'cm-policy-'));
  dirs.push(ws);
  await fs.mkdir(path.join(ws, '.cellmate'));
  return ws;
}

const userRules = async (store: PolicyStore) => (await store.rules()).slice(BUILTIN_RULES.length);

describe('PolicyStore (HARN-6)', () => {
  it('applies an edit to the next call, and stops applying a deleted file', async () => {
    const ws = await workspace();
    const file = path.join(ws, '.cellmate', 'policy.json');
    const store = new PolicyStore({
      workspace: ws,
      env: { HOME: path.join(ws, 'home'), CELLMATE_TRUSTED_WORKSPACES: ws }
    });
    expect(await userRules(store)).toEqual([]);

    await fs.writeFile(file, JSON.stringify({ rules: [{ tool: 'shell', pattern: 'git *', action: 'allow' }] }));
    expect(await userRules(store)).toEqual([{ tool: 'shell', pattern: 'git *', action: 'allow' }]);
    // Unchanged file: same rules again (served from the cache).
    expect(await userRules(store)).toEqual([{ tool: 'shell', pattern: 'git *', action: 'allow' }]);

    // Same length, different content: the stat stamp (size/mtime/ctime) still changes.
    await fs.writeFile(
      file,
      JSON.stringify({ rules: [{ tool: 'shell', pattern: 'git *', action: 'deny!' }] }).replace('deny!', 'deny')
    );
    expect(await userRules(store)).toEqual([{ tool: 'shell', pattern: 'git *', action: 'deny' }]);

    await fs.rm(file);
    expect(await userRules(store)).toEqual([]);
  });

  it('an untrusted workspace file keeps its ask and deny rules, drops its allow rules and says how to trust it; trust applies from the next call', async () => {
    const ws = await workspace();
    const problems: string[] = [];
    const home = path.join(ws, 'home');
    await fs.writeFile(
      path.join(ws, '.cellmate', 'policy.json'),
      JSON.stringify({
        rules: [
          { tool: 'shell', pattern: '*', action: 'allow' },
          { tool: 'eval', pattern: '*', action: 'ask' },
          { tool: 'write', pattern: '.env', action: 'deny' }
        ]
      })
    );
    const store = new PolicyStore({
      workspace: ws,
      env: { HOME: home },
      onProblem: (f, m) => problems.push(`${f}: ${m}`)
    });
    expect(await userRules(store)).toEqual([
      { tool: 'eval', pattern: '*', action: 'ask' },
      { tool: 'write', pattern: '.env', action: 'deny' }
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(
      `1 "allow" rule (shell *) not applied: a workspace's own policy file may only ask or deny unless you trust the workspace — add "trustedWorkspaces": [${JSON.stringify(ws)}] to ${path.join(home, '.cellmate', 'policy.json')}`
    );
    // The workspace's own .cellmate/ folder cannot trust it, even as the home folder.
    await fs.writeFile(path.join(ws, '.cellmate', 'mcp.json'), JSON.stringify({ trustedWorkspaces: true }));
    const inside = new PolicyStore({ workspace: ws, env: { HOME: home, CELLMATE_HOME: path.join(ws, '.cellmate') } });
    expect((await userRules(inside)).map((r) => r.action)).toEqual(['ask', 'deny']);
    await fs.mkdir(path.join(home, '.cellmate'), { recursive: true });
    await fs.writeFile(path.join(home, '.cellmate', 'policy.json'), JSON.stringify({ trustedWorkspaces: [ws] }));
    expect((await userRules(store)).map((r) => r.action)).toEqual(['allow', 'ask', 'deny']);
  });

  it('reports a malformed file and keeps only the other rules', async () => {
    const ws = await workspace();
    const problems: string[] = [];
    const home = path.join(ws, 'home');
    await fs.mkdir(path.join(home, '.cellmate'), { recursive: true });
    await fs.writeFile(
      path.join(home, '.cellmate', 'policy.json'),
      JSON.stringify({ rules: [{ tool: 'write', pattern: '*', action: 'allow' }] })
    );
    await fs.writeFile(path.join(ws, '.cellmate', 'policy.json'), '{"rules": [ oops');
    const store = new PolicyStore({
      workspace: ws,
      env: { HOME: home },
      onProblem: (f, m) => problems.push(`${f}: ${m}`)
    });
    expect(await userRules(store)).toEqual([{ tool: 'write', pattern: '*', action: 'allow' }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(path.join(ws, '.cellmate', 'policy.json'));
  });
});
