import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FULL_PROFILE, READ_ONLY_PROFILE, projectSurface, type CapabilityProfile } from '../../src/policy/profile.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { defineTool } from '../../src/gate/define-tool.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';
import { declarations } from '../../src/gate/catalog.js';

const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
const registry = (profile?: CapabilityProfile) =>
  new ToolRegistry(builtinTools({ questions: broker }), profile ? { profile } : {});
const ctx = (workspace: string, profile?: CapabilityProfile, actor: 'model' | 'kernel' | 'user' = 'model') => ({
  workspace,
  signal: new AbortController().signal,
  actor,
  chatId: 'c',
  turnId: 't',
  ...(profile ? { profile } : {})
});

const WRITE_PROFILE: CapabilityProfile = { name: 'write-only-files', maxTier: 'write' };
const REVIEW: CapabilityProfile = { name: 'review', maxTier: 'write', allow: ['edit'], deny: ['grep', 'ask_user'] };
const NO_WRITES: CapabilityProfile = {
  name: 'no-writes',
  maxTier: 'exec',
  refusedActionClasses: ['write-file', 'run-process']
};

describe('surfaces projected from a capability profile (TIER-1/2, MODE-2/2a/6/7)', () => {
  it.each([
    ['read-only', READ_ONLY_PROFILE, ['ask_user', 'ast_grep', 'code_graph', 'glob', 'grep', 'read']],
    [
      'write',
      WRITE_PROFILE,
      [
        'apply_patch',
        'ask_user',
        'ast_edit',
        'ast_grep',
        'code_graph',
        'edit',
        'glob',
        'grep',
        'read',
        'resolve',
        'write'
      ]
    ],
    [
      'full',
      FULL_PROFILE,
      [
        'apply_patch',
        'ask_user',
        'ast_edit',
        'ast_grep',
        'code_graph',
        'edit',
        'glob',
        'grep',
        'read',
        'resolve',
        'shell',
        'write'
      ]
    ],
    // MODE-2a: the allowlist restricts write+ only; read tools stay. MODE-6: ask_user is pinned.
    ['allowlist + denylist', REVIEW, ['ask_user', 'ast_grep', 'code_graph', 'edit', 'glob', 'read']],
    // MODE-7: refused action classes remove the tools that perform them (ast_edit/resolve write files).
    ['refused classes', NO_WRITES, ['ask_user', 'ast_grep', 'code_graph', 'glob', 'grep', 'read']]
  ] as const)('%s surface', (_label, profile, names) => {
    expect(
      registry()
        .list(profile)
        .map((t) => t.name)
    ).toEqual(names);
    expect(
      declarations(registry(profile))
        .map((d) => d.name)
        .sort()
    ).toEqual(names);
  });

  it('a read-only schema lists no write/exec tool, and forced calls are refused with the registry message', async () => {
    const ws = await tempDir();
    const reg = registry(READ_ONLY_PROFILE);
    const declared = Object.fromEntries(declarations(reg).map((d) => [d.name, d]));
    const tools = builtinTools({ questions: broker });
    expect(tools.some((t) => t.tier !== 'read')).toBe(true);
    expect(Object.keys(declared).sort()).toEqual(
      tools
        .filter((t) => t.tier === 'read')
        .map((t) => t.name)
        .sort()
    );
    const forced = await reg.call('write', { path: 'x.txt', content: 'x' }, ctx(ws));
    expect(forced).toMatchObject({
      ok: false,
      status: 'error',
      output:
        'Refused: write is a write-tier tool and the "read-only" surface allows only read tools. It is not available here; do not retry it.'
    });
    const shell = await reg.call('shell', { command: 'touch pwned' }, ctx(ws));
    expect(shell.output).toBe(
      'Refused: shell is an exec-tier tool and the "read-only" surface allows only read tools. It is not available here; do not retry it.'
    );
  });

  it('the same refusal applies to a kernel-bridge call carrying the read-only profile (actor kernel)', async () => {
    const ws = await tempDir();
    // A full registry; the call's context carries the calling turn's read-only surface.
    const result = await registry().call(
      'write',
      { path: 'x.txt', content: 'x' },
      ctx(ws, READ_ONLY_PROFILE, 'kernel')
    );
    expect(result.output).toMatch(/^Refused: write is a write-tier tool and the "read-only" surface/);
  });

  it('projectSurface keeps pinned tools whatever the profile', () => {
    const pinned = defineTool({
      name: 'submit_plan',
      tier: 'write',
      description: 'x',
      parameters: z.object({}),
      examples: [],
      execute: async () => ({ title: '', output: '' })
    });
    expect(
      projectSurface([pinned], {
        name: 'p',
        maxTier: 'read',
        deny: ['submit_plan'],
        refusedActionClasses: ['write-file']
      }).map((t) => t.name)
    ).toEqual(['submit_plan']);
  });
});
