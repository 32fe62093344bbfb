/**
 * The wire's runtime schemas against one typed example per method: every request's params
 * as the pane sends them pass the server's check, and every result as the server sends it
 * passes the pane's. The table's type lists each method, so a new request without an
 * example does not compile. Then the hostile side: what each check refuses.
 */
import { describe, expect, it } from 'vitest';
import type { Chat, ChatSummary, ModelSettings, RequestMethod, Requests, WorkerSummary } from '../src/index.js';
import { paramsSchemaOf, requestParamsSchemas, resultProblem, tierModelSchema } from '../src/wire-schemas.js';

const T = '2026-12-03T10:00:00.000Z';
const model: ModelSettings = {
  provider: 'scripted',
  model: 'demo',
  scriptPath: '',
  fast: { provider: 'openai', model: 'gpt-4.1-mini' },
  compactAt: 0.8
};
const summary: ChatSummary = { id: 'c1', title: 'Chat', mode: 'agent', createdAt: T, updatedAt: T };
const chat: Chat = {
  ...summary,
  items: [{ id: 'u1', time: T, turnId: 't1', kind: 'user', text: 'hi' }],
  running: false,
  olderCount: 0,
  model: { provider: 'anthropic', model: 'claude-sonnet-4-5' }
};
const worker: WorkerSummary = {
  id: 'w1',
  chatId: 'c1',
  label: 'scan',
  tier: 'fast',
  state: 'done',
  createdAt: T,
  startedAt: T,
  elapsedMs: 10,
  model: 'scripted/demo',
  sharesKernel: false,
  toolCalls: 2
};
const skill = {
  name: 's',
  description: 'd',
  source: 'home',
  folder: '/h/s',
  location: '~/.cellmate/skills/s',
  state: 'offered'
} as const;

/** One well-formed exchange per method, typed by the protocol. */
const EXAMPLES: { [K in RequestMethod]: { params: Requests[K]['params']; result: Requests[K]['result'] } } = {
  'cellmate/hello': {
    params: { protocolVersion: 1, interactive: true, paneSecret: 'p' },
    result: {
      protocolVersion: 1,
      serverVersion: '0.1.0',
      workspace: '/ws',
      providers: [{ kind: 'openai', keyConfigured: false, keySource: 'OPENAI_API_KEY', hint: 'set it' }],
      paneSecret: 'p'
    }
  },
  'config/providers': { params: {}, result: [{ kind: 'scripted', keyConfigured: true, keySource: '' }] },
  'chat/list': { params: {}, result: [summary] },
  'chat/create': { params: { title: 'New' }, result: chat },
  'chat/get': { params: { chatId: 'c1', limit: 200 }, result: chat },
  'chat/items': { params: { chatId: 'c1', before: 'u1', limit: 10 }, result: { items: [], olderCount: 0 } },
  'chat/rename': { params: { chatId: 'c1', title: 'T' }, result: summary },
  'chat/set-mode': { params: { chatId: 'c1', mode: 'plan' }, result: { ...summary, mode: 'plan' } },
  'chat/set-auto': { params: { chatId: 'c1', auto: true }, result: { ...summary, auto: true } },
  'chat/delete': { params: { chatId: 'c1' }, result: { deleted: true } },
  'chat/set-model': { params: { chatId: 'c1', model: null, settings: model }, result: { model: null } },
  'models/list': {
    params: { model },
    result: { models: [{ provider: 'scripted', model: 'demo', source: 'settings', tier: 'main' }] }
  },
  'inline/complete': {
    params: {
      requestId: 'r1',
      model,
      notebookPath: 'a.ipynb',
      language: 'python',
      prefix: 'x = ',
      suffix: '',
      cellsAbove: ['import os'],
      cellsBelow: []
    },
    result: { text: '1' }
  },
  'chat/send': {
    params: {
      chatId: 'c1',
      text: 'hi',
      model,
      context: { notebookPath: 'a.ipynb', selectedCells: [0], assist: { action: 'fix', cell: 0, cellId: 'x' } }
    },
    result: { turnId: 't1' }
  },
  'chat/retry': { params: { chatId: 'c1', model }, result: { turnId: 't2' } },
  'chat/edit': { params: { chatId: 'c1', text: 'again', model }, result: { turnId: 't3' } },
  'chat/checkpoints': { params: { chatId: 'c1' }, result: { turns: [{ turnId: 't1', paths: ['a.py'] }] } },
  'chat/rewind-preview': {
    params: { chatId: 'c1', itemId: 'u1', scope: 'turn' },
    result: {
      files: [{ path: 'a.py', diff: '@@', action: 'restore' }],
      kernelNames: [],
      turns: ['t1'],
      summary: 'restores a.py'
    }
  },
  'chat/rewind': {
    params: { chatId: 'c1', itemId: 'u1', scope: 'from', overwrite: false, conversation: true },
    result: { restored: ['a.py'], skipped: [], message: 'ok', text: 'hi' }
  },
  'debug/terminate': { params: { chatId: 'c1', sessionId: 's1' }, result: { terminated: false } },
  'plan/resolve': {
    params: { chatId: 'c1', planId: 'p1', decision: 'approve', model },
    result: { state: 'approved', message: 'ok' }
  },
  'worker/list': { params: { chatId: 'c1' }, result: [worker] },
  'worker/get': { params: { chatId: 'c1', workerId: 'w1' }, result: { worker, items: [] } },
  'worker/kill': { params: { chatId: 'c1', workerId: 'w1' }, result: { killed: true, message: 'killed' } },
  'orchestration/resolve': {
    params: { chatId: 'c1', orchestrationId: 'o1', decision: 'reject', reason: 'no', model },
    result: { state: 'rejected', message: 'ok' }
  },
  'review/start': { params: { scope: { notebook: 'a.ipynb' }, model }, result: { chatId: 'c2', turnId: 't1' } },
  'review/approve': { params: { chatId: 'c1', nodeId: 'n1' }, result: { state: 'approved', message: 'ok' } },
  'verify/accept': {
    params: { chatId: 'c1', runId: '20261203T100000Z-abcdef', path: 'a.ipynb' },
    result: { state: 'accepted', message: 'ok' }
  },
  'mcp/config-problems': { params: {}, result: ['MCP config: .cellmate/mcp.json: not JSON.'] },
  'mcp/servers': {
    params: {},
    result: [
      {
        name: 'm',
        transport: 'stdio',
        file: '.cellmate/mcp.json',
        state: 'running',
        restarts: 0,
        pid: 3,
        tools: 2,
        problems: []
      }
    ]
  },
  'chat/compact': { params: { chatId: 'c1', model }, result: { compacted: true, message: 'Compacted.' } },
  'chat/abort': { params: { chatId: 'c1' }, result: { aborted: true } },
  'chat/context': {
    params: { chatId: 'c1', kernel: { id: 'k', name: 'python3', language: 'python', notebookPath: 'a.ipynb' } },
    result: { ok: true }
  },
  'chat/answer': {
    params: { chatId: 'c1', questionId: 'q1', answer: { action: 'answer', selected: [0], text: 'why' } },
    result: { state: 'answered' }
  },
  'audit/metrics': {
    params: { chatId: 'c1' },
    result: {
      chatId: null,
      rows: [
        {
          tool: 'read',
          calls: 1,
          ok: 1,
          errors: 0,
          denied: 0,
          withheld: 0,
          successRate: 1,
          meanDurationMs: 3,
          autoAllowed: 0,
          autoAsked: 0,
          autoTimedOut: 0
        }
      ]
    }
  },
  'context/complete': {
    params: { prefix: 'd' },
    result: { items: [{ kind: 'variable', name: 'df', detail: 'DataFrame 3×2' }] }
  },
  'instructions/list': {
    params: { notebookPath: 'a.ipynb' },
    result: { files: [{ label: 'AGENTS.md', scope: 'workspace', chars: 10, shown: 10 }] }
  },
  'skills/list': { params: {}, result: [skill] },
  'skills/set-enabled': { params: { folder: '/h/s', enabled: false }, result: [{ ...skill, state: 'off' }] },
  'chat/export': {
    params: { chatId: 'c1' },
    result: { markdown: 'exports/c1.md', notebook: 'exports/c1.ipynb', files: [] }
  },
  'commands/list': { params: {}, result: [{ name: 'fix', description: 'Fix it', source: 'workspace' }] },
  'commands/expand': { params: { name: 'fix', arguments: 'a b' }, result: { text: 'Fix a b' } },
  'edit/resolve': {
    params: { chatId: 'c1', editId: 'e1', action: 'accept' },
    result: { state: 'accepted', message: 'ok' }
  }
};

const methods = Object.keys(EXAMPLES) as RequestMethod[];

describe('wire schemas (both directions, one table)', () => {
  it.each(methods)(
    '%s: the example params pass the server check unchanged, the example result passes the pane check (HARN-5)',
    (method) => {
      const { params, result } = EXAMPLES[method];
      const checked = paramsSchemaOf[method].safeParse(params);
      expect(checked.success ? checked.data : checked.error.issues).toEqual(params);
      expect(resultProblem(method, result)).toBeUndefined();
    }
  );

  it('lists exactly the protocol methods in both directions', () => {
    expect(Object.keys(requestParamsSchemas).sort()).toEqual([...methods].sort());
  });

  it('refuses what a hostile or mismatched pane sends: an unknown provider, a mode only the system sets, wrong types (HARN-5)', () => {
    const refused = (method: RequestMethod, params: unknown) =>
      paramsSchemaOf[method].safeParse(params).error?.issues[0];
    expect(
      refused('chat/send', { ...EXAMPLES['chat/send'].params, model: { provider: 'evil', model: 'x' } })?.path
    ).toEqual(['model', 'provider']);
    expect(refused('chat/send', { ...EXAMPLES['chat/send'].params, text: '' })?.message).toBe('must not be empty');
    expect(refused('chat/set-mode', { chatId: 'c1', mode: 'review' })?.message).toMatch(
      /^must be one of agent, plan, orchestrate/
    );
    expect(refused('chat/get', { chatId: 'c1', limit: 2.5 })?.path).toEqual(['limit']);
    expect(
      refused('chat/set-model', {
        chatId: 'c1',
        model: { provider: 'openai', model: 'm'.repeat(201) },
        settings: model
      })?.path
    ).toEqual(['model', 'model']);
    expect(tierModelSchema.safeParse({ provider: 'scripted', model: 'demo' }).success).toBe(true);
  });

  it('says which field of an answer is wrong, and lets fields it does not know through (a newer server)', () => {
    expect(resultProblem('chat/get', { ...chat, items: 'x' })).toMatch(/^items: /);
    expect(resultProblem('chat/list', [summary, { id: 3, title: 't' }])).toMatch(/^1\.id: /);
    expect(resultProblem('chat/send', null)).toMatch(/^the result: /);
    expect(resultProblem('chat/set-model', { model: { provider: 'evil', model: 'x' } })).toMatch(/^model\.provider: /);
    expect(resultProblem('verify/accept', { state: 'rejected', message: 'm' })).toMatch(/^state: /);
    expect(resultProblem('chat/send', { turnId: 't', later: { added: true } })).toBeUndefined();
  });
});
