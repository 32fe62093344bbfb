/** Generates connection info with free localhost ports and a random key. */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConnectionInfo } from '../zmq/connection.js';

function listen(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

/**
 * Five distinct free ports, found by binding 127.0.0.1:0 with all five held open at once.
 * There is a window between closing them and the kernel binding them (the same race
 * jupyter_client accepts); a kernel that loses it fails to start and says so.
 */
export async function freePorts(count = 5): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listen());
    return servers.map((s) => {
      const a = s.address();
      if (a === null || typeof a === 'string') throw new Error('unexpected server address');
      return a.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/** Fresh connection info: tcp on 127.0.0.1, hmac-sha256 with a random key. */
export async function createConnectionInfo(kernelName = ''): Promise<ConnectionInfo> {
  const [shell, iopub, stdin, control, hb] = (await freePorts(5)) as [number, number, number, number, number];
  return {
    transport: 'tcp',
    ip: '127.0.0.1',
    shell_port: shell,
    iopub_port: iopub,
    stdin_port: stdin,
    control_port: control,
    hb_port: hb,
    key: randomBytes(32).toString('hex'),
    signature_scheme: 'hmac-sha256',
    kernel_name: kernelName
  };
}

/** Writes `info` as `kernel-<uuid>.json` under `dir` (mode 0600: the key is a secret). */
export async function writeConnectionFile(info: ConnectionInfo, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `kernel-${randomUUID()}.json`);
  await writeFile(path, JSON.stringify(info, null, 2), { mode: 0o600 });
  return path;
}
