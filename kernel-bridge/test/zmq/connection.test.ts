import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKernelBridgeError } from '../../src/common/errors.js';
import { createConnectionInfo, freePorts } from '../../src/launch/connection-file.js';
import { parseConnectionInfo, readConnectionFile, socketUrl } from '../../src/zmq/connection.js';

describe('connection info', () => {
  it('creates five distinct free ports and a random key', async () => {
    const info = await createConnectionInfo();
    const ports = [info.shell_port, info.iopub_port, info.stdin_port, info.control_port, info.hb_port];
    expect(new Set(ports).size).toBe(5);
    expect(info.key).toMatch(/^[0-9a-f]{64}$/);
    expect(socketUrl(info, 'shell')).toBe(`tcp://127.0.0.1:${info.shell_port}`);
    expect((await freePorts(3)).length).toBe(3);
  });

  it('rejects invalid connection info with bad_connection_info', async () => {
    const bad = (v: unknown) => {
      try {
        parseConnectionInfo(v);
        return false;
      } catch (e) {
        return isKernelBridgeError(e, 'bad_connection_info');
      }
    };
    const good = await createConnectionInfo();
    expect(bad(null)).toBe(true);
    expect(bad({ ...good, shell_port: undefined })).toBe(true);
    expect(bad({ ...good, signature_scheme: 'hmac-md5' })).toBe(true);
    expect(bad({ ...good, transport: 'udp' })).toBe(true);
    expect(bad(good)).toBe(false);

    const dir = mkdtempSync(join(tmpdir(), 'cellmate-conn-'));
    try {
      writeFileSync(join(dir, 'broken.json'), '{');
      await expect(readConnectionFile(join(dir, 'broken.json'))).rejects.toSatisfy((e) =>
        isKernelBridgeError(e, 'bad_connection_info')
      );
      await expect(readConnectionFile(join(dir, 'missing.json'))).rejects.toSatisfy((e) =>
        isKernelBridgeError(e, 'bad_connection_info')
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
