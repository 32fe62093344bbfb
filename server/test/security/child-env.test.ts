/**
 * One environment scrub for every child, and the redactor (issue #8 item 4, HARN-5).
 * The real-process checks (shell, kernels) are in attack-table-exec.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { childEnv, isSecretVariable, scrubEnv } from '../../src/security/child-env.js';
import { MIN_SECRET_CHARS, Redactor } from '../../src/security/redaction.js';

describe('child environment scrub', () => {
  it.each([
    'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'CELLMATE_OPENAI_COMPATIBLE_API_KEY', 'CELLMATE_JUPYTER_TOKEN', 'CELLMATE_JUPYTER_URL',
    'JUPYTER_TOKEN', 'JUPYTERHUB_API_TOKEN', 'HF_TOKEN', 'GITHUB_TOKEN', 'GH_TOKEN', 'MY_SERVICE_SECRET', 'DB_PASSWORD',
    'PGPASSWORD', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'GOOGLE_APPLICATION_CREDENTIALS',
    'AZURE_CLIENT_SECRET', 'STRIPE_API_KEY', 'SLACK_WEBHOOK_URL', 'SENTRY_DSN', 'npm_config__auth', 'CELLMATE_CONFIG'
  ])('removes %s', (name) => {
    expect(isSecretVariable(name, 'value-1234567')).toBe(true);
    expect(childEnv({ [name]: 'value-1234567', PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });

  it.each(['PATH', 'HOME', 'LANG', 'PYTHONPATH', 'VIRTUAL_ENV', 'SSH_AUTH_SOCK', 'TOKENIZERS_PARALLELISM', 'CELLMATE_PYTHON', 'KEYBOARD'])(
    'keeps %s',
    (name) => {
      expect(isSecretVariable(name, '/x')).toBe(false);
    }
  );

  it('removes URLs with a password whatever the name; the allowlist lets names through', () => {
    expect(scrubEnv({ DATABASE_URL: 'postgres://me:hunter22@db/x', PLAIN_URL: 'https://example.com' }).env).toEqual({ PLAIN_URL: 'https://example.com' });
    const env = { CELLMATE_ENV_ALLOW: 'HF_TOKEN, MY_APP_*', HF_TOKEN: 'hf_abcdefgh', MY_APP_SECRET: 's3cretvalue', OTHER_SECRET: 'x1234567' };
    const out = scrubEnv(env, { EXTRA: '1' });
    expect(out.env).toEqual({ CELLMATE_ENV_ALLOW: 'HF_TOKEN, MY_APP_*', HF_TOKEN: 'hf_abcdefgh', MY_APP_SECRET: 's3cretvalue', EXTRA: '1' });
    expect(out.removed).toEqual(['OTHER_SECRET']);
  });
});

describe('Redactor', () => {
  const key = 'sk-test-0123456789abcdef';
  it('hides scrubbed values and config keys, deep, longest first; ignores short values', () => {
    const r = new Redactor({ OPENAI_API_KEY: key, SHORT_TOKEN: 'abc', PATH: '/usr/bin' });
    r.addConfig({ path: 'c.json', config: { apiKeys: { anthropic: 'sk-ant-file-key-999' } } });
    expect(r.redact(`a ${key} b sk-ant-file-key-999 abc /usr/bin`)).toBe('a [redacted] b [redacted] abc /usr/bin');
    expect(r.redactDeep({ output: key, display: [{ data: { 'text/plain': `x${key}` } }], n: 1 })).toEqual({ output: '[redacted]', display: [{ data: { 'text/plain': 'x[redacted]' } }], n: 1 });
    expect('abc'.length).toBeLessThan(MIN_SECRET_CHARS);
  });

  it('with partialTail hides a key cut at the end of a chunk', () => {
    const r = new Redactor({ OPENAI_API_KEY: key });
    expect(r.redact('key: sk-test-01234', { partialTail: true })).toBe('key: [redacted]');
    expect(r.redact('key: sk-test-01234')).toBe('key: sk-test-01234');
    expect(r.redact('plain text', { partialTail: true })).toBe('plain text');
  });
});
