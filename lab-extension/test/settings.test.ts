import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

import type { ProviderStatus } from '@cellmate/protocol';

import { DEFAULT_SETTINGS, keyInstructions, readSettings, setupProblem, toModelSettings } from '../src/settings';

const providers = (openaiKey: boolean): ProviderStatus[] => [
  {
    kind: 'openai',
    keyConfigured: openaiKey,
    keySource: 'OPENAI_API_KEY or /root/.cellmate/config.json (apiKeys.openai)'
  },
  {
    kind: 'anthropic',
    keyConfigured: false,
    keySource: 'ANTHROPIC_API_KEY',
    hint: 'Anthropic keys start with sk-ant-'
  },
  { kind: 'openai-compatible', keyConfigured: true, keySource: 'CELLMATE_OPENAI_COMPATIBLE_API_KEY (optional)' },
  { kind: 'scripted', keyConfigured: true, keySource: '' }
];

describe('readSettings / toModelSettings', () => {
  it('acceptsImages: auto is left to the server; yes/no are sent (EVAL-3)', () => {
    expect(readSettings({ provider: 'openai', acceptsImages: 'auto' }).acceptsImages).toBeUndefined();
    expect(
      toModelSettings(readSettings({ provider: 'openai-compatible', model: 'llava', acceptsImages: 'yes' }))
    ).toMatchObject({ acceptsImages: true });
    expect(toModelSettings(readSettings({ provider: 'openai', model: 'm', acceptsImages: 'no' }))).toMatchObject({
      acceptsImages: false
    });
    expect(toModelSettings(readSettings({ provider: 'openai', model: 'm' }))).not.toHaveProperty('acceptsImages');
  });

  it('contextWindow and compactAt are carried into the model settings when valid (CTX-1, CTX-3)', () => {
    const settings = readSettings({
      provider: 'openai-compatible',
      model: 'llama3.1',
      baseUrl: 'http://h/v1',
      contextWindow: 16384,
      compactAt: 0.7
    });
    expect(toModelSettings(settings)).toMatchObject({ contextWindow: 16384, compactAt: 0.7 });
    expect(toModelSettings(readSettings({ provider: 'scripted', contextWindow: 4000 }))).toMatchObject({
      contextWindow: 4000
    });
    // Absent, or a hand-edited value the schema would refuse: left to the server.
    const plain = toModelSettings(readSettings({ provider: 'openai', model: 'm' }));
    expect(plain).not.toHaveProperty('contextWindow');
    expect(plain).not.toHaveProperty('compactAt');
    for (const bad of [
      { contextWindow: 0 },
      { contextWindow: -5 },
      { contextWindow: 1.5 },
      { contextWindow: '16k' },
      { compactAt: 0.2 },
      { compactAt: 1 },
      { compactAt: '0.8' }
    ]) {
      const model = toModelSettings(readSettings({ provider: 'openai', model: 'm', ...bad }));
      expect(model).not.toHaveProperty('contextWindow');
      expect(model).not.toHaveProperty('compactAt');
    }
    expect(readSettings({ provider: 'openai', compactAt: 0.5 }).compactAt).toBe(0.5);
    expect(readSettings({ provider: 'openai', compactAt: 0.95 }).compactAt).toBe(0.95);
  });

  it('the schema offers contextWindow (optional) and compactAt (0.5–0.95, default 0.85)', async () => {
    const schema = JSON.parse(await readFile(new URL('../schema/plugin.json', import.meta.url), 'utf8'));
    expect(schema.properties.contextWindow).toMatchObject({ type: 'integer', minimum: 1 });
    expect(schema.properties.contextWindow).not.toHaveProperty('default');
    expect(schema.properties.compactAt).toMatchObject({ type: 'number', minimum: 0.5, maximum: 0.95, default: 0.85 });
  });

  it('reads defensively and treats unknown providers as not configured', () => {
    expect(readSettings(undefined)).toEqual(DEFAULT_SETTINGS);
    expect(readSettings({ provider: 'bogus', model: 3 })).toEqual(DEFAULT_SETTINGS);
    expect(readSettings({ provider: 'openai', model: ' gpt-4.1 ' })).toMatchObject({
      provider: 'openai',
      model: 'gpt-4.1'
    });
  });

  it('builds the ModelSettings sent with chat/send', () => {
    expect(toModelSettings(DEFAULT_SETTINGS)).toBeNull();
    expect(toModelSettings({ ...DEFAULT_SETTINGS, provider: 'openai', model: 'gpt-4.1', baseUrl: 'x' })).toEqual({
      provider: 'openai',
      model: 'gpt-4.1'
    });
    expect(
      toModelSettings({
        ...DEFAULT_SETTINGS,
        provider: 'openai-compatible',
        model: 'llama3.1',
        baseUrl: 'http://localhost:11434/v1',
        scriptPath: ''
      })
    ).toEqual({ provider: 'openai-compatible', model: 'llama3.1', baseUrl: 'http://localhost:11434/v1' });
    expect(toModelSettings({ ...DEFAULT_SETTINGS, provider: 'scripted' })).toEqual({
      provider: 'scripted',
      model: 'scripted',
      scriptPath: ''
    });
  });
});

describe('setupProblem', () => {
  it('the fast tier (issue #27): sent only when it names a provider and a model; inline completions stay off until set', () => {
    const fast = readSettings({
      provider: 'openai',
      model: 'gpt-4.1',
      fastModel: { provider: 'openai-compatible', model: ' qwen2.5-coder ', baseUrl: 'http://127.0.0.1:11434/v1' }
    });
    expect(toModelSettings(fast)).toEqual({
      provider: 'openai',
      model: 'gpt-4.1',
      fast: { provider: 'openai-compatible', model: 'qwen2.5-coder', baseUrl: 'http://127.0.0.1:11434/v1' }
    });
    expect(
      toModelSettings(readSettings({ provider: 'openai', model: 'm', fastModel: { provider: '', model: 'x' } }))
    ).not.toHaveProperty('fast');
    expect(
      toModelSettings(readSettings({ provider: 'openai', model: 'm', fastModel: { provider: 'anthropic', model: '' } }))
    ).not.toHaveProperty('fast');
    expect(readSettings({ provider: 'openai', fastModel: 'nonsense' }).fastModel).toEqual({
      provider: '',
      model: '',
      baseUrl: ''
    });
    expect(readSettings({ provider: 'openai' }).inlineCompletions).toBe(false);
    expect(readSettings({ provider: 'openai', inlineCompletions: 'yes' }).inlineCompletions).toBe(false);
    expect(readSettings({ provider: 'openai', inlineCompletions: true }).inlineCompletions).toBe(true);
  });

  it('says what to set when no provider is chosen', () => {
    const problem = setupProblem(DEFAULT_SETTINGS, providers(false));
    expect(problem?.reason).toBe('no-provider');
    expect(problem?.message).toBe(
      'Cellmate has no model yet. Set Settings → Cellmate → provider and model, and start ' +
        'Jupyter with OPENAI_API_KEY or ANTHROPIC_API_KEY in its environment (or put it in ' +
        '/root/.cellmate/config.json on the server).'
    );
  });

  it('works before hello (no provider list) with the default wording', () => {
    expect(setupProblem(DEFAULT_SETTINGS, null)?.message).toContain(
      'OPENAI_API_KEY or ANTHROPIC_API_KEY in its environment (or put it in ~/.cellmate/config.json'
    );
    expect(setupProblem({ ...DEFAULT_SETTINGS, provider: 'openai', model: 'm' }, null)).toBeNull();
  });

  it('points at a provider the server already has a key for', () => {
    expect(setupProblem(DEFAULT_SETTINGS, providers(true))?.message).toContain('The server has an API key for openai');
  });

  it('uses keySource and hint when the chosen provider has no key', () => {
    const openai = setupProblem({ ...DEFAULT_SETTINGS, provider: 'openai', model: 'gpt-4.1' }, providers(false));
    expect(openai?.reason).toBe('no-key');
    expect(openai?.message).toBe(
      'The Cellmate server has no API key for “openai”. Start Jupyter with OPENAI_API_KEY in ' +
        'its environment (or put it in /root/.cellmate/config.json (apiKeys.openai) on the ' +
        'server), then reload.'
    );
    const anthropic = setupProblem({ ...DEFAULT_SETTINGS, provider: 'anthropic', model: 'c' }, providers(false));
    expect(anthropic?.message).toContain('ANTHROPIC_API_KEY in its environment (or put it in ~/.cellmate/config.json');
    expect(anthropic?.hint).toBe('Anthropic keys start with sk-ant-');
  });

  it('asks for a model and a base URL where they are needed', () => {
    expect(setupProblem({ ...DEFAULT_SETTINGS, provider: 'openai' }, providers(true))?.reason).toBe('no-model');
    expect(
      setupProblem({ ...DEFAULT_SETTINGS, provider: 'openai-compatible', model: 'x' }, providers(true))?.reason
    ).toBe('no-base-url');
    expect(setupProblem({ ...DEFAULT_SETTINGS, provider: 'scripted' }, providers(false))).toBeNull();
  });

  it('phrases key sources', () => {
    expect(keyInstructions('OPENAI_API_KEY')).toBe(
      'start Jupyter with OPENAI_API_KEY in its environment (or put it in ~/.cellmate/config.json on the server)'
    );
    expect(keyInstructions('/etc/cellmate.json')).toBe('put it in /etc/cellmate.json on the server');
  });
});
