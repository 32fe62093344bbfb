// long: a day-long analysis chat against a 32k-token window. The companion as composed for
// real (startServer in this process: every built-in tool, a private ipykernel for eval)
// talks to the provider stand-in (server/test/helpers/provider-stand-in.ts) over the real
// OpenAI Responses and Anthropic Messages wires, through the real AI SDK provider packages.
// The stand-in refuses a prompt past its window with the provider's own overflow error,
// bills usage from each request body and simulates the provider's prompt cache (Anthropic:
// at the request's cache_control breakpoints; OpenAI: automatic prefix caching). Its token
// count is characters / 4 per canonical JSON block, images by their pixel size.
//
//   npm run bench -- long [TURNS=300] [WINDOW=32000]
//
// Each turn: the person asks for the next table; the model calls eval (through call_tool,
// after a tool_search when eval is not loaded, as the deferred catalog wants) with a cell
// printing a ~6,000-character table, every tenth turn also a matplotlib figure, then
// answers in one line. A request without tools (a summary request) gets a summary.
// LONG_WIRES=openai,anthropic picks the wires; LONG_DEBUG=1 prints what the script saw each request.
//
// Figures: turns — turns run per wire; overflow_failures — turns that ended in an error
// after the provider refused an overflowing prompt (both wires); max_prompt_ratio — the
// largest prompt sent (refused ones included) / window; cached_share — cached input /
// input over the Anthropic wire's requests after turn 10; step_ms_first / _last — p50 of a
// turn's wall time (chat/send to turn end) over turns 1–20 and the last 20, for the wire
// whose last/first is worse; compactions — compaction items in both transcripts.
// The stand-in runs in this process, so its accounting (~1 ms per request) is in the
// step times, at the start as at the end. Each wire's line also gives the p50 CPU time this
// process spent per turn (companion and stand-in; the kernel is another process): on a
// shared machine it tells per-step cost from load better than wall time does.
//
// Last line: long: turns=<n> overflow_failures=<n> max_prompt_ratio=<r> cached_share=<r> step_ms_first=<ms> step_ms_last=<ms> compactions=<n>
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineLine, median, round } from './lib.mjs';
import { startServer } from '../server/dist/server.js';
import { silentLogger } from '../server/dist/config/logger.js';

const TURNS = Number(process.argv[2] ?? 300);
const WINDOW = Number(process.argv[3] ?? 32_000);
const WIRES = (process.env.LONG_WIRES ?? 'openai,anthropic').split(',');

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = path.join(repo, 'test', '.build', 'provider-stand-in.mjs');
await build({
  entryPoints: [path.join(repo, 'server/test/helpers/provider-stand-in.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  outfile,
  logLevel: 'warning'
});
const { startProviderStandIn, declaredTools } = await import(pathToFileURL(outfile).href);

/** The cell of turn `n`: a ~6,000-character table (110 rows of ~54 characters), every tenth turn a figure too. */
function cell(n) {
  const lines = [
    'import math',
    'tables = globals().setdefault("tables", {})',
    `rows = [f"{i:5d} {math.sin(i + ${n}):12.6f} {math.cos(i * ${n}):12.6f} {i * ${n}:10d} {'row-' + str(i):>10}" for i in range(110)]`,
    `tables[${n}] = rows`,
    `df = {"turn": ${n}, "rows": len(rows)}`,
    'print("\\n".join(rows))'
  ];
  if (n % 10 === 0) {
    lines.push(
      'import matplotlib',
      'matplotlib.use("agg")',
      'import matplotlib.pyplot as plt',
      'from IPython.display import display',
      'fig, ax = plt.subplots(figsize=(6, 4), dpi=100)',
      `ax.plot([math.sin(i / 10 + ${n}) for i in range(200)])`,
      `ax.set_title("turn ${n}")`,
      'display(fig)',
      'plt.close(fig)'
    );
  }
  return lines.join('\n');
}

/** The request's last message, as far as the script needs it: the person's text, or which tool's result. */
function lastMessage(provider, body) {
  if (provider === 'openai') {
    const input = body.input ?? [];
    const last = input.at(-1);
    if (last?.type === 'function_call_output') {
      const call = input.findLast((i) => i.type === 'function_call' && i.call_id === last.call_id);
      return {
        kind: 'result',
        tool: call?.name,
        text: typeof last.output === 'string' ? last.output : JSON.stringify(last.output)
      };
    }
    return { kind: 'user' };
  }
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  const result = Array.isArray(last?.content) ? last.content.findLast((p) => p.type === 'tool_result') : undefined;
  if (result) {
    let tool;
    for (const m of messages)
      if (Array.isArray(m.content))
        for (const p of m.content) if (p.type === 'tool_use' && p.id === result.tool_use_id) tool = p.name;
    return {
      kind: 'result',
      tool,
      text: typeof result.content === 'string' ? result.content : JSON.stringify(result.content)
    };
  }
  return { kind: 'user' };
}

async function runWire(provider) {
  let turn = 0;
  let summaries = 0;
  const evalCall = (declared) => {
    const args = {
      code: cell(turn),
      description: `Print table ${turn}${turn % 10 === 0 ? ' and plot it' : ''}`,
      language: 'python'
    };
    return declared.includes('eval')
      ? { name: 'eval', input: args }
      : { name: 'call_tool', input: { name: 'eval', arguments: args } };
  };
  const responder = (request) => {
    const declared = declaredTools(provider, request.body).map((t) => t.name);
    if (declared.length === 0) {
      summaries++;
      return {
        text: `Summary of the session so far: the person asked for one table per turn, up to turn ${turn}; each table is in the kernel as tables[n] (a list of 110 formatted rows), and df = {"turn": ${turn}, "rows": 110} holds the latest. Every tenth turn a sine plot was shown. Nothing else was changed.`
      };
    }
    const last = lastMessage(provider, request.body);
    if (process.env.LONG_DEBUG)
      console.log(
        '  debug',
        turn,
        declared.join(','),
        last.kind,
        last.tool,
        String(last.text ?? '')
          .slice(0, 200)
          .replace(/\n/g, ' | ')
      );
    if (last.kind === 'user') return { toolCalls: [evalCall(declared)] };
    if (last.tool === 'call_tool' && /is not loaded/.test(last.text))
      return { toolCalls: [{ name: 'tool_search', input: { query: 'eval' } }] };
    if (last.tool === 'tool_search') return { toolCalls: [evalCall(declared)] };
    return { text: `Table ${turn} printed (110 rows).` };
  };
  const standIn = await startProviderStandIn(provider, responder, { window: WINDOW });
  const ws = mkdtempSync(path.join(os.tmpdir(), 'cellmate-long-'));
  const server = await startServer({
    workspace: ws,
    stdio: { input: new PassThrough(), output: new PassThrough() },
    fetch: standIn.fetch,
    maxRetries: 0,
    logger: silentLogger,
    env: { ...standIn.env, PATH: process.env.PATH ?? '', HOME: ws, CELLMATE_CONFIG: path.join(ws, 'no-config.json') }
  });
  const settings = { ...standIn.settings, contextWindow: WINDOW };
  const chat = server.service.create('long session');
  const turns = [];
  for (turn = 1; turn <= TURNS; turn++) {
    const firstRequest = standIn.requests.length;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await server.service.send(
      chat.id,
      `Turn ${turn}: print the next table${turn % 10 === 0 ? ' and plot it' : ''}.`,
      settings
    );
    const result = await server.service.waitForTurn(chat.id);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const requests = standIn.requests.slice(firstRequest);
    turns.push({
      turn,
      ms,
      cpuMs,
      reason: result?.reason,
      error: result?.error,
      requests,
      overflowed: requests.some((r) => r.overflow)
    });
    if (result?.reason !== 'stop' && turns.filter((t) => t.reason !== 'stop').length <= 2)
      console.log(`  ${provider} turn ${turn}: ${result?.reason}: ${String(result?.error ?? '').slice(0, 240)}`);
  }
  const items = server.service.get(chat.id).items;
  const compactions = items.filter((i) => i.kind === 'compaction');
  const evals = items.filter((i) => i.kind === 'tool' && i.name === 'eval');
  await server.dispose();
  await standIn.close();
  rmSync(ws, { recursive: true, force: true });

  const all = standIn.requests;
  const accepted = all.filter((r) => !r.overflow);
  const afterTen = turns
    .filter((t) => t.turn > 10)
    .flatMap((t) => t.requests)
    .filter((r) => !r.overflow);
  const sum = (rs, key) => rs.reduce((n, r) => n + r.usage[key], 0);
  const first = median(turns.slice(0, 20).map((t) => t.ms));
  const last = median(turns.slice(-20).map((t) => t.ms));
  const cpuFirst = median(turns.slice(0, 20).map((t) => t.cpuMs));
  const cpuLast = median(turns.slice(-20).map((t) => t.cpuMs));
  const failures = turns.filter((t) => t.reason !== 'stop');
  const figures = {
    provider,
    turns: turns.length,
    overflowFailures: failures.filter((t) => t.overflowed).length,
    otherFailures: failures.filter((t) => !t.overflowed).length,
    firstFailure: failures[0]?.turn,
    maxPromptRatio: Math.max(...all.map((r) => r.usage.promptTokens)) / WINDOW,
    cachedShare: sum(afterTen, 'cachedTokens') / Math.max(1, sum(afterTen, 'promptTokens')),
    first,
    last,
    cpuFirst,
    cpuLast,
    compactions: compactions.length,
    compactionTriggers: compactions.map((c) => c.trigger),
    summaries,
    requests: all.length,
    refused: all.length - accepted.length,
    evalsOk: evals.filter((e) => e.status === 'ok').length
  };
  console.log(
    `  ${provider}: turns ${figures.turns}, failed ${failures.length} (overflow ${figures.overflowFailures}, first at turn ${figures.firstFailure ?? '-'}), ` +
      `requests ${figures.requests} (refused ${figures.refused}, summary requests ${summaries}), evals ok ${figures.evalsOk}, ` +
      `largest prompt ${Math.max(...all.map((r) => r.usage.promptTokens))} tokens, cached share after turn 10 ${round(figures.cachedShare, 3)}, ` +
      `turn p50 first 20 ${round(first)} ms, last 20 ${round(last)} ms (this process's CPU ${round(cpuFirst)} → ${round(cpuLast)} ms), compactions ${figures.compactions}${compactions.length ? ` (${[...new Set(figures.compactionTriggers)].join('/')})` : ''}`
  );
  return figures;
}

console.log(machineLine());
console.log(`long: ${TURNS} turns per wire, window ${WINDOW} tokens, wires ${WIRES.join(', ')}`);
const results = [];
for (const provider of WIRES) results.push(await runWire(provider));
const anthropic = results.find((r) => r.provider === 'anthropic');
const worst = results.reduce((a, b) => (b.last / b.first > a.last / a.first ? b : a));
console.log(
  `long: turns=${Math.min(...results.map((r) => r.turns))} overflow_failures=${results.reduce((n, r) => n + r.overflowFailures, 0)} ` +
    `max_prompt_ratio=${round(Math.max(...results.map((r) => r.maxPromptRatio)), 3)} cached_share=${anthropic ? round(anthropic.cachedShare, 3) : 'NaN'} ` +
    `step_ms_first=${round(worst.first)} step_ms_last=${round(worst.last)} compactions=${results.reduce((n, r) => n + r.compactions, 0)}`
);
