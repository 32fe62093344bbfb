import { readdir, readFile, stat, utimes, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog, auditLimitsFromEnv, DEFAULT_AUDIT_LIMITS } from '../../src/audit/audit-log.js';
import { silentLogger } from '../../src/config/logger.js';
import { noteSavedOutput, removeChatOutputs } from '../../src/housekeeping/saved-outputs.js';
import { startServer } from '../../src/server.js';
import type { AuditEntry } from '../../src/ports/gate-ports.js';
import { scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

// Issue #15 (housekeeping), SPEC HARN-7: the audit log and saved outputs stay bounded and go with their chat.

function entry(chatId: string, n: number): AuditEntry {
  return {
    time: new Date().toISOString(),
    chatId,
    turnId: 't',
    callId: `call-${n}`,
    actor: 'model',
    tool: 'read',
    args: { path: `f${n}` },
    decision: 'allow',
    status: 'ok',
    durationMs: 1
  } as unknown as AuditEntry;
}

describe('audit log housekeeping', () => {
  it('rotates a chat log past its size limit, keeping one older generation, and reads both in order', async () => {
    const ws = await tempDir();
    const log = new AuditLog(
      ws,
      (e) => {
        throw e;
      },
      { maxBytes: 2_000, maxAgeMs: DEFAULT_AUDIT_LIMITS.maxAgeMs }
    );
    for (let n = 0; n < 100; n++) log.record(entry('c1', n));
    log.record(entry('c2', 0));
    await log.flush();
    const dir = path.join(ws, '.cellmate', 'audit');
    const names = (await readdir(dir)).sort();
    expect(names).toContain('c1.1.jsonl');
    expect(names.filter((n) => n !== 'c1.jsonl')).toEqual(['c1.1.jsonl', 'c2.jsonl']);
    for (const name of names) expect((await stat(path.join(dir, name))).size).toBeLessThanOrEqual(2_000 + 400);
    const kept = (await log.entries('c1')).map((e) => e.callId);
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.length).toBeLessThan(100);
    expect(kept).toEqual(kept.map((_, i) => `call-${100 - kept.length + i}`)); // the newest, oldest first
    await log.removeChat('c1');
    expect(await readdir(dir)).toEqual(['c2.jsonl']);
  });

  it('removes logs not written for longer than the age limit', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, '.cellmate', 'audit');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'old.jsonl'), '{}\n');
    const old = new Date(Date.now() - 3 * 24 * 3600 * 1000);
    await utimes(path.join(dir, 'old.jsonl'), old, old);
    const log = new AuditLog(
      ws,
      (e) => {
        throw e;
      },
      auditLimitsFromEnv({ CELLMATE_AUDIT_MAX_AGE_DAYS: '2' })
    );
    log.record(entry('new', 0));
    await log.flush();
    expect(await readdir(dir)).toEqual(['new.jsonl']);
    expect(auditLimitsFromEnv({ CELLMATE_AUDIT_MAX_BYTES: 'lots' })).toEqual(DEFAULT_AUDIT_LIMITS);
  });
});

describe('saved outputs housekeeping', () => {
  it('keeps .cellmate/outputs under its cap, oldest first, and removes one chat’s files only', async () => {
    const dir = path.join(await tempDir(), 'outputs');
    await mkdir(dir);
    for (let n = 0; n < 10; n++) {
      const name = `${n % 2 ? 'a' : 'b'}--shell-${n}.txt`;
      await writeFile(path.join(dir, name), 'x'.repeat(1000));
      const t = new Date(Date.now() - (100 - n) * 1000);
      await utimes(path.join(dir, name), t, t);
      await noteSavedOutput(dir, 1000, 5_000);
    }
    const left = (await readdir(dir)).sort();
    const total = left.length * 1000;
    expect(total).toBeLessThanOrEqual(5_000);
    expect(left).toContain('b--shell-8.txt'); // the newest stay
    expect(left).toContain('a--shell-9.txt');
    expect(left).not.toContain('b--shell-0.txt'); // the oldest went first
    await removeChatOutputs(dir, 'a');
    expect((await readdir(dir)).every((n) => n.startsWith('b--'))).toBe(true);
  });

  it('a deleted chat takes its audit log and its saved outputs with it (real server, real tools)', async () => {
    const ws = await tempDir();
    // A shell command with a long output (saved in full by output shaping), allowed by a policy rule.
    await writeFile(
      path.join(ws, 'policy.json'),
      JSON.stringify({ rules: [{ tool: 'shell', pattern: 'seq *', action: 'allow' }] })
    );
    const model = await scriptSettings(ws, {
      steps: [
        { text: 'Counting.', chunkDelayMs: 0, toolCalls: [{ toolName: 'shell', input: { command: 'seq 1 3000' } }] },
        { text: 'Done.', chunkDelayMs: 0 }
      ]
    });
    const env = {
      CELLMATE_CONFIG: path.join(ws, 'none.json'),
      CELLMATE_POLICY: path.join(ws, 'policy.json'),
      HOME: ws,
      PATH: process.env.PATH
    };
    const server = await startServer({
      workspace: ws,
      socketPath: path.join(ws, 's.sock'),
      logger: silentLogger,
      env,
      kernels: false
    });
    try {
      const keep = server.service.create('keep');
      const gone = server.service.create('gone');
      for (const chat of [keep, gone]) {
        await server.service.send({ chatId: chat.id, text: 'grep it', settings: model });
        await server.service.waitForTurn(chat.id);
      }
      await server.audit.flush();
      const outputs = path.join(ws, '.cellmate', 'outputs');
      const audit = path.join(ws, '.cellmate', 'audit');
      expect((await readdir(outputs)).filter((n) => n.startsWith(`${gone.id}--shell-`))).toHaveLength(1);
      expect(await readdir(audit)).toContain(`${gone.id}.jsonl`);
      expect(await server.service.delete(gone.id)).toBe(true);
      expect((await readdir(outputs)).some((n) => n.includes(gone.id))).toBe(false);
      expect((await readdir(outputs)).filter((n) => n.startsWith(`${keep.id}--`))).toHaveLength(1);
      expect(await readdir(audit)).toEqual([`${keep.id}.jsonl`]);
      expect(await readFile(path.join(audit, `${keep.id}.jsonl`), 'utf8')).toContain('"tool":"shell"');
    } finally {
      await server.dispose();
    }
  });
});
