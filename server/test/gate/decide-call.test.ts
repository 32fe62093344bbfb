import type { ToolActor } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import {
  actionClassesOf,
  decideAnswer,
  decideCall,
  type AskVerdict,
  type AutoReviewState,
  type CallVerdict,
  type GateTool
} from '../../src/gate/decide-call.js';
import { dangerousCommandReason } from '../../src/policy/dangerous-command.js';
import { BUILTIN_RULES, ruleForAlways, type PolicyRule } from '../../src/policy/policy.js';
import { FULL_PROFILE, READ_ONLY_PROFILE } from '../../src/policy/profile.js';
import type { ApprovalDecision } from '../../src/ports/gate-ports.js';
import type { CapabilityProfile } from '../../src/ports/vocabulary.js';
import { strictestJudgement, type Judgement } from '../../src/gate/call-subjects.js';

// The approval walk as a table: each row is what the gate found about a call, who makes it
// and the floor → the verdict. Decisions come from the real policy evaluator and the real
// dangerous-command floor over each row's rules; nothing is stubbed.

const WORKSPACE = '/srv/ws';

const tools = {
  read: tool('read', 'read'),
  write: tool('write', 'write'),
  shell: tool('shell', 'exec'),
  eval: tool('eval', 'exec'),
  ask_user: tool('ask_user', 'read'),
  git_push: { ...tool('git_push', 'exec'), dangerLabel: 'force push' }
};

function tool(name: string, tier: GateTool['tier']): GateTool {
  return { name, tier, actionClasses: actionClassesOf({ tier }) };
}

/** The tool's own judgement: paths, or a command judged by the dangerous-command floor. */
function paths(t: GateTool, ...subjects: string[]): Judgement {
  return { tool: t.name, tier: t.tier, subjects, kind: 'path' };
}
function command(t: GateTool, text: string): Judgement {
  return { tool: t.name, tier: t.tier, subjects: [text], kind: 'text', danger: dangerousCommandReason(text) };
}
/** A cell's `os.system(...)`: `eval` also judged as `shell`. */
function asShell(text: string): Judgement {
  return { ...command(tools.shell, text), why: 'the cell runs a process' };
}

interface Row {
  call: GateTool;
  judgements?: Judgement[];
  rules?: readonly PolicyRule[];
  actor?: ToolActor;
  profile?: CapabilityProfile;
  auto?: AutoReviewState;
  trusted?: boolean;
  /** No policy gate at all (tests, embedding). */
  noPolicy?: boolean;
}

const AUTO_ON: AutoReviewState = { enabled: true, paused: false };
const AUTO_OFF: AutoReviewState = { enabled: false, paused: false };

function decide(row: Row): CallVerdict {
  const rules = [...BUILTIN_RULES, ...(row.rules ?? [])];
  const judgements = row.judgements ?? [
    { tool: row.call.name, tier: row.call.tier, subjects: [], kind: 'text' as const }
  ];
  const { judgement: chosen, decision } = strictestJudgement(rules, judgements);
  return decideCall(
    { tool: row.call, ...(row.noPolicy ? {} : { policy: { rules, judgements, chosen, decision } }) },
    { kind: row.actor ?? 'model', profile: row.profile ?? FULL_PROFILE },
    { workspace: WORKSPACE, workspaceTrusted: row.trusted ?? true },
    row.auto ?? AUTO_OFF
  );
}

const allow = (t: string, pattern: string): PolicyRule => ({ tool: t, pattern, action: 'allow' });
const deny = (t: string, pattern: string): PolicyRule => ({ tool: t, pattern, action: 'deny' });
const ask = (t: string, pattern: string): PolicyRule => ({ tool: t, pattern, action: 'ask' });

describe('decideCall: one row per rule of the approval walk', () => {
  const rows: Array<[string, Row, Partial<CallVerdict> & Record<string, unknown>]> = [
    // Tiers and defaults
    [
      'TIER-1 HARN-6: a read-tier call runs by default',
      { call: tools.read, judgements: [paths(tools.read, 'a.md')] },
      { kind: 'run', decision: 'allowed-by-default', reach: { kind: 'rules', tier: 'read' } }
    ],
    [
      'TIER-1 HARN-6: a write-tier call asks by default',
      { call: tools.write, judgements: [paths(tools.write, 'a.md')] },
      {
        kind: 'ask',
        reason: 'write-tier tools ask by default',
        subject: 'a.md',
        always: [ruleForAlways('write', 'a.md', 'path')]
      }
    ],
    [
      'TIER-1 HARN-6: an exec-tier call asks by default',
      { call: tools.shell, judgements: [command(tools.shell, 'ls -la')] },
      { kind: 'ask', reason: 'exec-tier tools ask by default', subject: 'ls -la' }
    ],
    [
      'HARN-6: eval is allowed by the built-in rule',
      { call: tools.eval, judgements: [command(tools.eval, 'print(1)')] },
      { kind: 'run', decision: 'allowed-by-rule' }
    ],
    [
      'HARN-6: no policy gate runs every call unchecked',
      { call: tools.shell, judgements: [command(tools.shell, 'rm -rf /')], noPolicy: true },
      { kind: 'run', decision: 'unchecked' }
    ],
    // Rules
    [
      'HARN-6: an allow rule runs the call, judging walked files by the rules alone',
      { call: tools.shell, judgements: [command(tools.shell, 'git status')], rules: [allow('shell', 'git *')] },
      { kind: 'run', decision: 'allowed-by-rule', reach: { kind: 'rules', tier: 'exec' } }
    ],
    [
      'HARN-6: an ask rule asks where an allow rule would run',
      {
        call: tools.shell,
        judgements: [command(tools.shell, 'git push origin')],
        rules: [allow('shell', 'git *'), ask('shell', 'git push*')]
      },
      { kind: 'ask', reason: `policy rule ${JSON.stringify(ask('shell', 'git push*'))}` }
    ],
    [
      'HARN-6: a deny rule beats an allow rule on another subject of the same call',
      {
        call: tools.write,
        judgements: [paths(tools.write, 'notes/a.md', '.env')],
        rules: [allow('write', 'notes/*'), deny('*', '.env')]
      },
      {
        kind: 'refuse',
        decision: 'denied-by-rule',
        message: expect.stringContaining('Denied: write on ".env" is denied by the policy rule')
      }
    ],
    [
      "HARN-6: a deny rule refuses even the person's own click",
      { call: tools.write, judgements: [paths(tools.write, '.env')], rules: [deny('*', '.env')], actor: 'user' },
      { kind: 'refuse', decision: 'denied-by-rule' }
    ],
    [
      'HARN-6 EVAL-5: a cell judged as shell is refused by a shell deny rule although eval is allowed',
      {
        call: tools.eval,
        judgements: [command(tools.eval, 'os.system("rm x")'), asShell('rm x')],
        rules: [deny('shell', 'rm *')]
      },
      {
        kind: 'refuse',
        decision: 'denied-by-rule',
        message: expect.stringContaining('(the cell runs a process, so it is judged as shell)')
      }
    ],
    [
      'HARN-6: an always-allow rule for exactly these files runs the call',
      { call: tools.write, judgements: [paths(tools.write, 'a.md')], rules: [ruleForAlways('write', 'a.md', 'path')] },
      { kind: 'run', decision: 'allowed-by-rule' }
    ],
    [
      'HARN-6: Always is offered for the subjects that asked, not those already allowed',
      { call: tools.write, judgements: [paths(tools.write, 'notes/a.md', 'b.md')], rules: [allow('write', 'notes/*')] },
      { kind: 'ask', subject: 'b.md', always: [ruleForAlways('write', 'b.md', 'path')] }
    ],
    // The dangerous-command floor
    [
      'HARN-6: the danger floor asks even with an allow rule',
      { call: tools.shell, judgements: [command(tools.shell, 'rm -rf /')], rules: [allow('shell', '*')] },
      {
        kind: 'ask',
        reason: expect.stringMatching(/^dangerous command: .+ \(always asks, whatever the policy says\)$/),
        autoReview: { eligible: false, why: 'danger' }
      }
    ],
    [
      "HARN-6: the floor names the tool's own danger label",
      {
        call: tools.git_push,
        judgements: [{ ...command(tools.git_push, 'git push'), danger: 'rewrites the remote history' }],
        rules: [allow('git_push', '*')]
      },
      { kind: 'ask', reason: 'force push: rewrites the remote history (always asks, whatever the policy says)' }
    ],
    [
      'HARN-6: the floor asks the person even for their own click',
      { call: tools.shell, judgements: [command(tools.shell, 'rm -rf /')], actor: 'user' },
      { kind: 'ask', autoReview: { eligible: false, why: 'danger' } }
    ],
    [
      'HARN-6 EVAL-5: a cell running a dangerous command asks as shell, with the way it was judged',
      { call: tools.eval, judgements: [command(tools.eval, 'os.system("rm -rf /")'), asShell('rm -rf /')] },
      {
        kind: 'ask',
        reason: expect.stringMatching(/^dangerous command: .+ \(the cell runs a process, so it is judged as shell\)$/),
        judgedAs: expect.objectContaining({ tool: 'shell' }),
        reach: { kind: 'answered', tier: 'exec' }
      }
    ],
    // Actors
    [
      "HARN-6: the person's own click on a card is its own approval",
      { call: tools.write, judgements: [paths(tools.write, 'a.md')], actor: 'user' },
      { kind: 'run', decision: 'approved-by-action', reach: { kind: 'answered', tier: 'write' } }
    ],
    [
      "EVAL-5: a kernel's tool() call asks like the model's and may be auto-reviewed",
      { call: tools.write, judgements: [paths(tools.write, 'a.md')], actor: 'kernel', auto: AUTO_ON },
      { kind: 'ask', reason: 'write-tier tools ask by default', autoReview: { eligible: true } }
    ],
    [
      "SIDE-1: the model's call that asks may be auto-reviewed",
      { call: tools.write, judgements: [paths(tools.write, 'a.md')], actor: 'model', auto: AUTO_ON },
      { kind: 'ask', reason: 'write-tier tools ask by default', autoReview: { eligible: true } }
    ],
    [
      "HARN-12 SIDE-1: an MCP client's call asks and is never auto-reviewed",
      { call: tools.write, judgements: [paths(tools.write, 'a.md')], actor: 'mcp', auto: AUTO_ON },
      { kind: 'ask', autoReview: { eligible: false, why: 'actor' } }
    ],
    // Surfaces
    [
      'TIER-2 MODE-7: a write tool on the plan (read-only) surface is refused, whatever the rules allow',
      {
        call: tools.write,
        judgements: [paths(tools.write, 'a.md')],
        rules: [allow('write', '*')],
        profile: { ...READ_ONLY_PROFILE, name: 'plan' }
      },
      {
        kind: 'refuse',
        decision: 'refused-surface',
        message: expect.stringContaining(
          'Refused: write is a write-tier tool and the "plan" surface allows only read tools'
        )
      }
    ],
    [
      'TIER-2: a read tool on the read-only surface runs',
      { call: tools.read, judgements: [paths(tools.read, 'a.md')], profile: READ_ONLY_PROFILE },
      { kind: 'run', decision: 'allowed-by-default' }
    ],
    [
      "TIER-2: the person's own click is refused off the surface too",
      { call: tools.shell, judgements: [command(tools.shell, 'ls')], actor: 'user', profile: READ_ONLY_PROFILE },
      { kind: 'refuse', decision: 'refused-surface' }
    ],
    [
      'MODE-6: a pinned tool runs on any surface whatever the rules say',
      { call: tools.ask_user, rules: [deny('*', '*')], profile: { ...READ_ONLY_PROFILE, deny: ['ask_user'] } },
      { kind: 'run', decision: 'pinned' }
    ],
    // The Auto reviewer
    [
      'SIDE-1: Auto off sends nothing to the reviewer',
      { call: tools.shell, judgements: [command(tools.shell, 'make test')], auto: AUTO_OFF },
      { kind: 'ask', autoReview: { eligible: false, why: 'off' } }
    ],
    [
      'SIDE-3: Auto paused for the turn by its breaker sends nothing to the reviewer',
      { call: tools.shell, judgements: [command(tools.shell, 'make test')], auto: { enabled: true, paused: true } },
      { kind: 'ask', autoReview: { eligible: false, why: 'paused' } }
    ],
    [
      "SIDE-1: an untrusted workspace's command naming a place outside it is never auto-reviewed",
      {
        call: tools.shell,
        judgements: [command(tools.shell, 'cp out.csv /tmp/elsewhere/')],
        auto: AUTO_ON,
        trusted: false
      },
      { kind: 'ask', autoReview: { eligible: false, why: 'untrusted-outside' } }
    ],
    [
      'SIDE-1: the same command in a trusted workspace may be auto-reviewed',
      {
        call: tools.shell,
        judgements: [command(tools.shell, 'cp out.csv /tmp/elsewhere/')],
        auto: AUTO_ON,
        trusted: true
      },
      { kind: 'ask', autoReview: { eligible: true } }
    ],
    [
      "SIDE-1: an untrusted workspace's command inside it may be auto-reviewed",
      { call: tools.shell, judgements: [command(tools.shell, 'cp out.csv results/')], auto: AUTO_ON, trusted: false },
      { kind: 'ask', autoReview: { eligible: true } }
    ],
    [
      'SIDE-1: a deny is refused, never sent to the reviewer',
      { call: tools.shell, judgements: [command(tools.shell, 'rm x')], rules: [deny('shell', 'rm *')], auto: AUTO_ON },
      { kind: 'refuse', decision: 'denied-by-rule' }
    ]
  ];

  it.each(rows)('%s', (_name, row, expected) => {
    const verdict = decide(row);
    expect(verdict).toMatchObject(expected);
    // A run verdict carries a path reach exactly when a policy judged the call.
    if (verdict.kind === 'run')
      expect(verdict.reach === undefined).toBe(verdict.decision === 'pinned' || verdict.decision === 'unchecked');
  });

  it('HARN-6: after "Always" the remembered rules run the same call, and the floor still asks', () => {
    const row: Row = { call: tools.write, judgements: [paths(tools.write, 'a.md', 'notes/b.md')] };
    const first = decide(row) as AskVerdict;
    expect(first.kind).toBe('ask');
    const answered = decideAnswer(first, { decision: 'always' }, 'write');
    expect(answered).toMatchObject({ kind: 'run', decision: 'approved-always' });
    const remembered = answered.kind === 'run' ? answered.remember : [];
    expect(decide({ ...row, rules: remembered })).toMatchObject({ kind: 'run', decision: 'allowed-by-rule' });

    const dangerous: Row = { call: tools.shell, judgements: [command(tools.shell, 'rm -rf /')] };
    const asked = decide(dangerous) as AskVerdict;
    const always = decideAnswer(asked, { decision: 'always' }, 'shell');
    expect(decide({ ...dangerous, rules: always.kind === 'run' ? always.remember : [] })).toMatchObject({
      kind: 'ask',
      autoReview: { why: 'danger' }
    });
  });
});

describe("decideAnswer: the person's answer to an ask (HARN-6, HARN-9)", () => {
  const asked = decide({ call: tools.write, judgements: [paths(tools.write, 'a.md')] }) as AskVerdict;
  it.each<[string, ApprovalDecision, Record<string, unknown>]>([
    [
      'once runs the call and remembers nothing',
      { decision: 'once' },
      { kind: 'run', decision: 'approved-once', remember: [], reach: { kind: 'answered', tier: 'write' } }
    ],
    [
      'always runs the call and remembers the offered rules',
      { decision: 'always' },
      { kind: 'run', decision: 'approved-always', remember: asked.always }
    ],
    [
      "deny refuses with the person's reason",
      { decision: 'deny', reason: 'not now' },
      { kind: 'refuse', decision: 'denied-by-person', message: expect.stringContaining('Their reason: not now') }
    ],
    ['an expired card refuses (HARN-9)', { decision: 'expired' }, { kind: 'refuse', decision: 'denied-expired' }],
    [
      'nobody to ask refuses, fail-closed',
      { decision: 'unavailable' },
      {
        kind: 'refuse',
        decision: 'denied-no-person',
        message: expect.stringContaining('(write-tier tools ask by default)')
      }
    ],
    [
      'a stopped turn stops the call, audited as asked (nobody said no)',
      { decision: 'cancelled' },
      { kind: 'stopped', decision: 'asked' }
    ]
  ])('%s', (_name, answer, expected) => {
    expect(decideAnswer(asked, answer, 'write')).toMatchObject(expected);
  });
});
