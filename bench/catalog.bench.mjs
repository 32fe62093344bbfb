// Token cost of the tool catalog (SPEC HARN-11): the full set of tool declarations the
// model receives (name, description with examples, JSON schema), against the deferred
// form (pinned ask_user + tool_search whose description holds a one-line index).
// Counted with a real tokenizer (js-tiktoken, o200k_base — GPT-4o/4.1/5 family).
// Needs server/dist (npm run build:ts).
import { getEncoding } from 'js-tiktoken';
import { machineLine } from './lib.mjs';
import { Presence } from '../server/dist/questions/presence.js';
import { QuestionBroker } from '../server/dist/questions/question-broker.js';
import { declarations, deferredDeclarations } from '../server/dist/tools/catalog.js';
import { builtinTools } from '../server/dist/tools/index.js';
import { ToolRegistry } from '../server/dist/tools/registry.js';

const enc = getEncoding('o200k_base');
const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
const registry = new ToolRegistry(builtinTools({ questions: broker }));
const tokens = (value) => enc.encode(JSON.stringify(value)).length;

console.log(machineLine());
for (const d of declarations(registry)) console.log(`  ${d.name.padEnd(12)} ${tokens(d)} tokens`);
const full = tokens(declarations(registry));
const index = tokens(deferredDeclarations(registry));
console.log(`tools: ${declarations(registry).map((d) => d.name).join(', ')}`);
console.log(`catalog: full_tokens=${full} index_tokens=${index}`);
