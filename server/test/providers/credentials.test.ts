import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/config-file.js';
import { createLanguageModel } from '../../src/providers/create-model.js';
import { providerStatuses, resolveApiKey } from '../../src/providers/credentials.js';
import { tempDir } from '../helpers/temp.js';

describe('provider credentials', () => {
  it('prefers the environment over the config file and reports the source only', async () => {
    const ws = await tempDir();
    const file = path.join(ws, 'config.json');
    await writeFile(file, JSON.stringify({ apiKeys: { openai: 'from-file', anthropic: 'ant-file' } }));
    const env = { CELLMATE_CONFIG: file, OPENAI_API_KEY: 'from-env' };
    const config = await loadConfigFile(env);
    expect(resolveApiKey('openai', env, config)).toEqual({ value: 'from-env', source: 'OPENAI_API_KEY' });
    expect(resolveApiKey('anthropic', env, config)).toEqual({
      value: 'ant-file',
      source: `${file} (apiKeys.anthropic)`
    });
    const statuses = providerStatuses(env, config);
    expect(statuses.map((s) => [s.kind, s.keyConfigured])).toEqual([
      ['openai', true],
      ['anthropic', true],
      ['openai-compatible', true],
      ['scripted', true]
    ]);
    expect(JSON.stringify(statuses)).not.toMatch(/from-env|from-file|ant-file/);
  });

  it('hints what to set when a key is missing, and survives a malformed config file', async () => {
    const ws = await tempDir();
    const file = path.join(ws, 'config.json');
    await writeFile(file, '{"apiKeys": {"openai": "sk-half');
    const env = { CELLMATE_CONFIG: file };
    const config = await loadConfigFile(env);
    expect(config.problem).toBe(`${file} is not valid JSON`);
    const openai = providerStatuses(env, config)[0]!;
    expect(openai).toMatchObject({ kind: 'openai', keyConfigured: false });
    expect(openai.hint).toContain('Set OPENAI_API_KEY');
    expect(openai.hint).toContain('is not valid JSON');
    expect(JSON.stringify(openai)).not.toContain('sk-half');
  });

  it('refuses unusable settings with ProviderUnavailable', async () => {
    const ws = await tempDir();
    const env = { CELLMATE_CONFIG: path.join(ws, 'none.json') };
    const providerEnv = { env, config: await loadConfigFile(env), workspace: ws };
    await expect(createLanguageModel({ provider: 'openai', model: 'gpt-4.1' }, providerEnv)).rejects.toThrow(
      expect.objectContaining({ code: -32012, message: expect.stringContaining('No API key for openai') })
    );
    await expect(createLanguageModel({ provider: 'anthropic', model: '' }, providerEnv)).rejects.toThrow(
      /No model is set/
    );
    await expect(createLanguageModel({ provider: 'bogus' as 'openai', model: 'x' }, providerEnv)).rejects.toThrow(
      /Unknown provider "bogus"/
    );
    const model = await createLanguageModel(
      { provider: 'openai', model: 'gpt-4.1' },
      { ...providerEnv, env: { ...env, OPENAI_API_KEY: 'k' } }
    );
    expect(typeof model).toBe('object');
  });
});
