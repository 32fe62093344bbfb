/** Jupyter connection files (`kernel-<id>.json`): reading, validating, socket URLs. */
import { readFile } from 'node:fs/promises';
import { KernelBridgeError } from '../common/errors.js';

export interface ConnectionInfo {
  transport: 'tcp' | 'ipc';
  ip: string;
  shell_port: number;
  iopub_port: number;
  stdin_port: number;
  control_port: number;
  hb_port: number;
  key: string;
  signature_scheme: string;
  kernel_name?: string;
}

export type SocketName = 'shell' | 'iopub' | 'stdin' | 'control' | 'hb';

/** Validates a parsed connection object; throws `bad_connection_info`. */
export function parseConnectionInfo(value: unknown): ConnectionInfo {
  const bad = (why: string) => new KernelBridgeError('bad_connection_info', `connection info: ${why}`);
  if (typeof value !== 'object' || value === null) throw bad('not an object');
  const v = value as Record<string, unknown>;
  for (const p of ['shell_port', 'iopub_port', 'stdin_port', 'control_port', 'hb_port']) {
    if (typeof v[p] !== 'number') throw bad(`${p} missing`);
  }
  if (typeof v.ip !== 'string') throw bad('ip missing');
  if (typeof v.key !== 'string') throw bad('key missing');
  const scheme = (v.signature_scheme as string | undefined) ?? 'hmac-sha256';
  if (v.key !== '' && scheme !== 'hmac-sha256') throw bad(`unsupported signature_scheme ${scheme}`);
  const transport = (v.transport as string | undefined) ?? 'tcp';
  if (transport !== 'tcp' && transport !== 'ipc') throw bad(`unsupported transport ${transport}`);
  // Every field was checked above except transport and signature_scheme, which are set next to it.
  return { ...(v as unknown as ConnectionInfo), transport, signature_scheme: scheme };
}

/** Reads and validates a connection file. */
export async function readConnectionFile(path: string): Promise<ConnectionInfo> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new KernelBridgeError('bad_connection_info', `cannot read connection file ${path}`, { cause: e });
  }
  try {
    return parseConnectionInfo(JSON.parse(text));
  } catch (e) {
    if (e instanceof KernelBridgeError) throw e;
    throw new KernelBridgeError('bad_connection_info', `connection file ${path} is not JSON`, { cause: e });
  }
}

/** `tcp://127.0.0.1:5555` or `ipc://<ip>-<port>` (jupyter_client's ipc naming). */
export function socketUrl(info: ConnectionInfo, name: SocketName): string {
  const port = info[`${name}_port` as const];
  return info.transport === 'ipc' ? `ipc://${info.ip}-${port}` : `tcp://${info.ip}:${port}`;
}
