import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { DebugSessionManager } from '../../src/dap/session-manager.js';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { EXPOSED_TOOLS } from '../../src/mcp/expose.js';
import { serveMcpStdio } from '../../src/mcp/serve.js';
import { createReviewAxes } from '../../src/flows/review-axes.js';
import { OrchestrationStore } from '../../src/modes/orchestrate/orchestration-store.js';
import { PlanStore } from '../../src/modes/plan/plan-store.js';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { startServer } from '../../src/server.js';
import { SkillLibrary } from '../../src/skills/skill-library.js';
import { builtinTools, type ToolResources } from '../../src/tools/builtin-tools.js';
import { createToolSearchTool } from '../../src/tools/tool_search/tool_search.js';

import { PaneHub } from '../../src/notebooks/pane-hub.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { WorkerService } from '../../src/workers/worker-service.js';
import { WorkerStore } from '../../src/workers/worker-store.js';
import { tempDir } from '../helpers/temp.js';

// What TIER-3 says each resource brings, written out by hand (not read from the table).
const ALWAYS = [
  'apply_patch',
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
];
const BRINGS = {
  catalog: ['tool_search'],
  questions: ['ask_user'],
  panes: ['notebook_edit', 'notebook_read', 'notebook_run'],
  kernels: ['eval', 'kernel_state', 'notebook_accept_outputs', 'notebook_verify'],
  lsp: ['lsp', 'lsp_code_action', 'lsp_rename'],
  debug: ['debug'],
  workers: ['vibe_kill', 'vibe_list', 'vibe_send', 'vibe_spawn', 'vibe_wait'],
  plans: ['exit_plan_mode', 'submit_plan'],
  reviews: ['add_review_node', 'approve_review_node', 'finalize_review'],
  orchestrations: ['propose_orchestration'],
  skills: ['skill']
};
// Typed so that a resource added to the table without a line here fails to compile
// (`edits` and `graphs` are shared stores that bring no tool of their own).
type Resource = Exclude<keyof ToolResources, 'edits' | 'graphs'>;
const brings: Record<Resource, string[]> = BRINGS;

const expected = (...resources: Resource[]): string[] => [...ALWAYS, ...resources.flatMap((r) => brings[r])].sort();

const disposals: Array<() => unknown> = [];
afterEach(async () => {
  for (const d of disposals.splice(0)) await d();
});

/** Real resources (none of them starts a process until a tool uses it), keyed like {@link BRINGS}. */
async function realResources(
  ws: string,
  registry: () => ToolRegistry
): Promise<Required<Omit<ToolResources, 'catalog' | 'edits' | 'graphs'>>> {
  const panes = new PaneHub();
  const lsp = new LspService({ workspace: ws, env: {}, logger: silentLogger, bundledBins: [] });
  const workers = new WorkerService({
    workspace: ws,
    env: {},
    logger: silentLogger,
    store: await WorkerStore.open(path.join(ws, 'workers'), silentLogger),
    registry,
    chatMode: () => 'agent',
    publish: () => undefined
  });
  const kernels = new KernelManager({ workspace: ws });
  const sessions = new DebugSessionManager();
  const plans = new PlanStore(path.join(ws, 'plans'));
  const reviews = new ReviewStore(path.join(ws, 'reviews'));
  const orchestrations = new OrchestrationStore(path.join(ws, 'orchestrations'));
  disposals.push(
    () => workers.dispose(),
    () => kernels.dispose(),
    () => sessions.dispose(),
    () => lsp.dispose(),
    () => plans.dispose(),
    () => reviews.dispose(),
    () => orchestrations.dispose()
  );
  return {
    questions: new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() }),
    panes,
    kernels: { kernels, registry },
    lsp: { service: lsp, docs: new DocumentSync(lsp, panes) },
    debug: { sessions },
    workers,
    plans,
    reviews: { store: reviews, axes: createReviewAxes({ registry, env: {} }) },
    orchestrations,
    skills: new SkillLibrary({ workspace: ws, env: {} })
  };
}

describe('TIER-3: one table decides which built-in tools exist for the resources attached', () => {
  const combinations: Resource[][] = [
    [],
    ['catalog'],
    ['questions'],
    ['panes'],
    ['kernels'],
    ['kernels', 'panes'],
    ['lsp'],
    ['lsp', 'panes'],
    ['debug'],
    ['workers'],
    ['plans'],
    ['reviews'],
    ['orchestrations'],
    ['skills'],
    ['catalog', 'lsp'], // what `cellmate mcp` holds
    Object.keys(BRINGS) as Resource[]
  ];
  for (const combination of combinations) {
    it(`TIER-3 with ${combination.length ? combination.join(' + ') : 'no resource'}: exactly ${combination.length ? 'the always-on tools and theirs' : 'the always-on tools'}`, async () => {
      const ws = await tempDir();
      const registry = new ToolRegistry([], { toolSearch: createToolSearchTool });
      const all = await realResources(ws, () => registry);
      const attached: ToolResources = {};
      for (const r of combination) Object.assign(attached, r === 'catalog' ? { catalog: registry } : { [r]: all[r] });
      for (const tool of builtinTools(attached)) registry.register(tool);
      expect(registry.list().map((t) => t.name)).toEqual(expected(...combination));
    });
  }

  it('TIER-3: the started companion registers exactly the table for what it holds (kernels and workers on, then off)', async () => {
    const ws = await tempDir();
    for (const [options, resources] of [
      [{}, Object.keys(BRINGS) as Resource[]],
      [
        { kernels: false, workers: false },
        (Object.keys(BRINGS) as Resource[]).filter((r) => r !== 'kernels' && r !== 'workers')
      ]
    ] as const) {
      const handle = await startServer({
        workspace: ws,
        stdio: { input: new PassThrough(), output: new PassThrough() },
        logger: silentLogger,
        env: {},
        ...options
      });
      try {
        expect(handle.registry.list().map((t) => t.name)).toEqual(expected(...resources));
      } finally {
        await handle.dispose();
      }
    }
  });

  it('TIER-3: `cellmate mcp` lists exactly the exposed subset of the same table', async () => {
    const ws = await tempDir();
    const input = new PassThrough();
    const output = new PassThrough();
    const served = serveMcpStdio({
      workspace: ws,
      env: { HOME: ws, CELLMATE_CONFIG: path.join(ws, 'none.json') },
      logger: silentLogger,
      input,
      output
    });
    const replies = new Map<number, { result?: { tools?: Array<{ name: string }> } }>();
    let buffer = '';
    output.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, nl)) as {
          id?: number;
          result?: { tools?: Array<{ name: string }> };
        };
        buffer = buffer.slice(nl + 1);
        if (typeof message.id === 'number') replies.set(message.id, message);
      }
    });
    const send = (message: object): void => void input.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const reply = async (id: number) => {
      for (let i = 0; i < 200 && !replies.has(id); i++) await new Promise((r) => setTimeout(r, 50));
      return replies.get(id);
    };
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } }
    });
    await reply(1);
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list', params: {} });
    const listed = (await reply(2))?.result?.tools?.map((t) => t.name);
    input.end();
    await served;
    expect(listed?.sort()).toEqual([...EXPOSED_TOOLS].sort());
    // Every exposed tool comes from the table for what `cellmate mcp` holds (catalog + lsp).
    for (const name of EXPOSED_TOOLS) expect(expected('catalog', 'lsp')).toContain(name);
  });

  it('TIER-3 HARN-11: a registry built without tool_search refuses a deferred tool instead of hiding it; with toolSearch it brings tool_search along', () => {
    const deferred = { ...builtinTools()[0]!, name: 'ext__thing', deferred: true };
    expect(() => new ToolRegistry([]).register(deferred)).toThrow(/deferred tools need tool_search/);
    expect(() => new ToolRegistry([]).addToolSource({ owns: () => false, load: async () => {} })).toThrow(
      /deferred tools need tool_search/
    );
    const registry = new ToolRegistry([], { toolSearch: createToolSearchTool });
    registry.register(deferred);
    expect(registry.list().map((t) => t.name)).toEqual(['ext__thing', 'tool_search']);
  });
});
