// What the model really receives each step (SPEC HARN-11): the companion as
// composed for real (startServer: every built-in tool registered, eval included), one turn
// per provider against a local HTTP stand-in (server/test/helpers/provider-stand-in.ts)
// that records the request body the real AI SDK provider package sent; counted are that
// body's `tools` (as JSON) plus its system prompt — for a chat in each mode too
// (each mode's fixed surface, MODE-2; `mode_<mode>_tokens` are OpenAI's). Also: every tool declared in full
// (full_tokens, the catalog without tool_search) and the deferred index alone.
// Tokenizer: js-tiktoken o200k_base (GPT-4o/4.1/5) for every provider. Anthropic's own
// tokenizer is not public (only its count_tokens API), so anthropic_fixed_tokens is the
// o200k count of the Anthropic request's tools + system; Claude's counts run higher.
// Needs server/dist (npm run build:ts).
import { build } from 'esbuild';
import { getEncoding } from 'js-tiktoken';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineLine } from './lib.mjs';
import { startServer } from '../server/dist/server.js';
import { fullDeclarations, surfaceCatalog, deferredIndex } from '../server/dist/gate/catalog.js';

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
const { startProviderStandIn, declaredTools, systemPrompt } = await import(pathToFileURL(outfile).href);

const enc = getEncoding('o200k_base');
const tokens = (value) => enc.encode(typeof value === 'string' ? value : JSON.stringify(value)).length;

console.log(machineLine());
const fixed = {};
// Each mode's fixed surface (MODE-2): the same count for a turn of a chat in that mode.
const MODES = ['agent', 'plan', 'review', 'orchestrate'];
const modeFixed = {};
let registry;
for (const provider of ['openai', 'anthropic', 'openai-compatible']) {
  const standIn = await startProviderStandIn(provider, [{ text: 'ok' }, ...MODES.map(() => ({ text: 'ok' }))]);
  const ws = mkdtempSync(path.join(os.tmpdir(), 'cellmate-catalog-'));
  const server = await startServer({
    workspace: ws,
    stdio: { input: new PassThrough(), output: new PassThrough() },
    fetch: standIn.fetch,
    maxRetries: 0,
    env: { ...standIn.env, PATH: process.env.PATH ?? '', CELLMATE_CONFIG: path.join(ws, 'no-config.json') }
  });
  registry = server.registry;
  const chat = server.service.create();
  await server.service.send(chat.id, 'hi', standIn.settings);
  await server.service.waitForTurn(chat.id);
  const body = standIn.requests[0]?.body;
  if (!body) throw new Error(`${provider}: the stand-in received no request`);
  const tools = tokens(body.tools ?? []);
  const system = tokens(systemPrompt(provider, body));
  fixed[provider] = tools + system;
  console.log(
    `  ${provider.padEnd(18)} declared: ${declaredTools(provider, body)
      .map((t) => t.name)
      .join(', ')} — tools ${tools} + system ${system} = ${tools + system} tokens`
  );
  modeFixed[provider] = {};
  for (const mode of MODES) {
    const modeChat = server.service.create();
    server.service.setMode(modeChat.id, mode);
    const before = standIn.requests.length;
    await server.service.send(modeChat.id, 'hi', standIn.settings);
    await server.service.waitForTurn(modeChat.id);
    const modeBody = standIn.requests[before]?.body;
    if (!modeBody) throw new Error(`${provider} ${mode}: the stand-in received no request`);
    const t = tokens(modeBody.tools ?? []);
    const sys = tokens(systemPrompt(provider, modeBody));
    modeFixed[provider][mode] = t + sys;
    console.log(
      `    mode ${mode.padEnd(12)} declared: ${declaredTools(provider, modeBody)
        .map((d) => d.name)
        .join(', ')} — tools ${t} + system ${sys} = ${t + sys} tokens`
    );
  }
  await server.dispose();
  await standIn.close();
}
// Ten skills installed (SKILL-2), in a trusted workspace so all are offered: the
// Agent request then carries the skill catalog and the `skill` tool. Descriptions are long on
// purpose (400 characters, the Agent Skills limit is 1,024): the catalog's bound is what counts.
const SKILL_TOPICS = [
  'pdf-report',
  'polars-cleaning',
  'plot-style',
  'sql-warehouse',
  'model-card',
  'data-dictionary',
  'notebook-review',
  'experiment-log',
  'geo-maps',
  'time-series'
];
const skillsFixed = {};
for (const provider of ['openai', 'anthropic']) {
  const standIn = await startProviderStandIn(provider, [{ text: 'ok' }]);
  const ws = mkdtempSync(path.join(os.tmpdir(), 'cellmate-catalog-skills-'));
  for (const name of SKILL_TOPICS) {
    mkdirSync(path.join(ws, '.cellmate', 'skills', name), { recursive: true });
    const description =
      `Use when the user asks for ${name.replace('-', ' ')} work in a notebook: ${'covers loading, checking, transforming and presenting the data step by step with the team conventions, '.repeat(4)}`.slice(
        0,
        400
      );
    writeFileSync(
      path.join(ws, '.cellmate', 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n# ${name}\nSteps.\n`
    );
  }
  const server = await startServer({
    workspace: ws,
    stdio: { input: new PassThrough(), output: new PassThrough() },
    fetch: standIn.fetch,
    maxRetries: 0,
    env: {
      ...standIn.env,
      PATH: process.env.PATH ?? '',
      CELLMATE_CONFIG: path.join(ws, 'no-config.json'),
      CELLMATE_HOME: path.join(ws, 'home'),
      CELLMATE_TRUSTED_WORKSPACES: ws
    }
  });
  const chat = server.service.create();
  await server.service.send(chat.id, 'hi', standIn.settings);
  await server.service.waitForTurn(chat.id);
  const body = standIn.requests[0]?.body;
  if (!body) throw new Error(`${provider} skills: the stand-in received no request`);
  const t = tokens(body.tools ?? []);
  const sys = tokens(systemPrompt(provider, body));
  skillsFixed[provider] = t + sys;
  console.log(
    `  ${provider.padEnd(18)} ten skills: declared ${declaredTools(provider, body)
      .map((d) => d.name)
      .join(', ')} — tools ${t} + system ${sys} = ${t + sys} tokens`
  );
  await server.dispose();
  await standIn.close();
}
const full = fullDeclarations(registry);
for (const d of full) console.log(`    ${d.name.padEnd(16)} ${tokens(d)} tokens in full`);
const { deferred } = surfaceCatalog(registry);
console.log(
  'tokenizer: o200k_base for every provider (Anthropic publishes no tokenizer; its count_tokens API is the reference)'
);
console.log(`openai-compatible: fixed_tokens=${fixed['openai-compatible']}`);
for (const provider of Object.keys(modeFixed))
  console.log(`modes ${provider}: ${MODES.map((m) => `${m}=${modeFixed[provider][m]}`).join(' ')}`);
console.log(`skills: openai_skills10_tokens=${skillsFixed.openai} anthropic_skills10_tokens=${skillsFixed.anthropic}`);
console.log(
  `catalog: openai_fixed_tokens=${fixed.openai} anthropic_fixed_tokens=${fixed.anthropic} full_tokens=${tokens(full)} index_tokens=${tokens(deferredIndex(deferred))} tools=${registry.list().length} ${MODES.map((m) => `mode_${m}_tokens=${modeFixed.openai[m]}`).join(' ')}`
);
