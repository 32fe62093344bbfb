/**
 * One environment scrub for every child, and the redactor (issue #8 item 4, HARN-5).
 * The real-process checks (shell, kernels) are in attack-table-exec.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { childEnv, isSecretVariable, scrubEnv } from '../../src/security/child-env.js';
import { MIN_SECRET_CHARS, Redactor } from '../../src/security/redaction.js';

describe('child environment scrub', () => {
  it.each([
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'CELLMATE_OPENAI_COMPATIBLE_API_KEY',
    'CELLMATE_JUPYTER_TOKEN',
    'CELLMATE_JUPYTER_URL',
    'JUPYTER_TOKEN',
    'JUPYTERHUB_API_TOKEN',
    'HF_TOKEN',
    'GITHUB_TOKEN',
    'GH_TOKEN',
    'MY_SERVICE_SECRET',
    'DB_PASSWORD',
    'PGPASSWORD',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'AZURE_CLIENT_SECRET',
    'STRIPE_API_KEY',
    'SLACK_WEBHOOK_URL',
    'SENTRY_DSN',
    'npm_config__auth',
    'CELLMATE_CONFIG'
  ])('removes %s', (name) => {
    expect(isSecretVariable(name, 'value-1234567')).toBe(true);
    expect(childEnv({ [name]: 'value-1234567', PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });

  it.each([
    'PATH',
    'HOME',
    'LANG',
    'PYTHONPATH',
    'VIRTUAL_ENV',
    'SSH_AUTH_SOCK',
    'TOKENIZERS_PARALLELISM',
    'CELLMATE_PYTHON',
    'KEYBOARD'
  ])('keeps %s', (name) => {
    expect(isSecretVariable(name, '/x')).toBe(false);
  });

  it('removes URLs with a password whatever the name; the allowlist lets names through', () => {
    expect(scrubEnv({ DATABASE_URL: 'postgres://me:hunter22@db/x', PLAIN_URL: 'https://example.com' }).env).toEqual({
      PLAIN_URL: 'https://example.com'
    });
    const env = {
      CELLMATE_ENV_ALLOW: 'HF_TOKEN, MY_APP_*',
      HF_TOKEN: 'hf_abcdefgh',
      MY_APP_SECRET: 's3cretvalue',
      OTHER_SECRET: 'x1234567'
    };
    const out = scrubEnv(env, { EXTRA: '1' });
    expect(out.env).toEqual({
      CELLMATE_ENV_ALLOW: 'HF_TOKEN, MY_APP_*',
      HF_TOKEN: 'hf_abcdefgh',
      MY_APP_SECRET: 's3cretvalue',
      EXTRA: '1'
    });
    expect(out.removed).toEqual(['OTHER_SECRET']);
  });
});

describe('Redactor', () => {
  const key = 'sk-test-0123456789abcdef';
  it('hides scrubbed values and config keys, deep, longest first; ignores short values', () => {
    const r = new Redactor({ OPENAI_API_KEY: key, SHORT_TOKEN: 'abc', PATH: '/usr/bin' });
    r.addConfig({ path: 'c.json', config: { apiKeys: { anthropic: 'sk-ant-file-key-999' } } });
    expect(r.redact(`a ${key} b sk-ant-file-key-999 abc /usr/bin`)).toBe('a [redacted] b [redacted] abc /usr/bin');
    expect(r.redactDeep({ output: key, display: [{ data: { 'text/plain': `x${key}` } }], n: 1 })).toEqual({
      output: '[redacted]',
      display: [{ data: { 'text/plain': 'x[redacted]' } }],
      n: 1
    });
    expect('abc'.length).toBeLessThan(MIN_SECRET_CHARS);
  });

  it('with partialTail hides a key cut at the end of a chunk', () => {
    const r = new Redactor({ OPENAI_API_KEY: key });
    expect(r.redact('key: sk-test-01234', { partialTail: true })).toBe('key: [redacted]');
    expect(r.redact('key: sk-test-01234')).toBe('key: sk-test-01234');
    expect(r.redact('plain text', { partialTail: true })).toBe('plain text');
  });
});

describe('the registry redacts every result, progress line and audit line', () => {
  it('output, title, display, metadata, progress and the audit entry', async () => {
    const { z } = await import('zod');
    const { defineTool } = await import('../../src/gate/define-tool.js');
    const { ToolRegistry } = await import('../../src/gate/registry.js');
    const key = 'sk-live-ABCDEFGH12345678';
    const leaky = defineTool({
      name: 'leaky',
      tier: 'read',
      description: 'test tool that prints a secret',
      parameters: z.object({}),
      examples: [],
      async execute(_args, ctx) {
        ctx.progress?.({ lastLine: `half ${key.slice(0, 12)}` });
        ctx.progress?.({ lastLine: `whole ${key}` });
        return {
          title: `t ${key}`,
          output: `o ${key}`,
          display: { outputs: [{ 'text/plain': key }] },
          metadata: { deep: [key] }
        } as never;
      }
    });
    const audited: unknown[] = [];
    const redactor = new Redactor({ STRIPE_API_KEY: key });
    const registry = new ToolRegistry([leaky], { redactor, audit: { record: (e) => audited.push(e) } });
    const progress: string[] = [];
    const result = await registry.call(
      'leaky',
      {},
      {
        workspace: '/tmp',
        signal: new AbortController().signal,
        actor: 'model',
        chatId: 'c',
        progress: (u) => progress.push(u.lastLine ?? '')
      }
    );
    expect(JSON.stringify(result)).not.toContain(key);
    expect(JSON.stringify(result)).toContain('o [redacted]');
    expect(progress).toEqual(['half [redacted]', 'whole [redacted]']);
    expect(JSON.stringify(audited)).not.toContain(key);
    // Without a redactor the same call shows the key (positive control for the test itself).
    const plain = await new ToolRegistry([leaky]).call(
      'leaky',
      {},
      { workspace: '/tmp', signal: new AbortController().signal, actor: 'model', chatId: 'c' }
    );
    expect(plain.output).toContain(key);
  });
});
