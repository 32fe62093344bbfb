import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/** Server-side configuration file (`$CELLMATE_CONFIG`, default `~/.cellmate/config.json`). */
export interface ConfigFile {
  apiKeys: Partial<Record<'openai' | 'anthropic' | 'openai-compatible', string>>;
}

const configSchema = z.object({
  apiKeys: z
    .object({
      openai: z.string().optional(),
      anthropic: z.string().optional(),
      'openai-compatible': z.string().optional()
    })
    .partial()
    .optional()
});

/** The config file path for an environment. */
export function configFilePath(env: NodeJS.ProcessEnv): string {
  const configured = env.CELLMATE_CONFIG?.trim();
  return configured ? path.resolve(configured) : path.join(os.homedir(), '.cellmate', 'config.json');
}

/** Result of loading the config file; `problem` is a human message (never contains keys). */
export interface LoadedConfig {
  path: string;
  config: ConfigFile;
  problem?: string;
}

/**
 * Reads the config file. A missing file is an empty config; an unreadable or malformed
 * one is an empty config plus a `problem` message (the server keeps running).
 */
export async function loadConfigFile(env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<LoadedConfig> {
  const file = configFilePath(env);
  let text: string;
  try {
    text = await readFile(file, { encoding: 'utf8', signal });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path: file, config: { apiKeys: {} } };
    return { path: file, config: { apiKeys: {} }, problem: `cannot read ${file}: ${(error as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // The parser's message may quote file content (a key): never repeat it.
    return { path: file, config: { apiKeys: {} }, problem: `${file} is not valid JSON` };
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) {
    return { path: file, config: { apiKeys: {} }, problem: `${file} must look like {"apiKeys": {"openai": "…"}}` };
  }
  return { path: file, config: { apiKeys: parsed.data.apiKeys ?? {} } };
}
