/**
 * Worker settings (SPEC VIBE-3): which model each tier runs, and the
 * budget of one run. They live in the companion's home config file (`CELLMATE_CONFIG`,
 * default `~/.cellmate/config.json`) under `workers`, never in the workspace: a cloned
 * repository must not point a worker at another server with the user's keys.
 *
 * ```json
 * {"workers": {"tiers": {"fast": {"provider": "openai", "model": "gpt-4.1-mini"},
 *                        "good": {"provider": "anthropic", "model": "claude-sonnet-4-5"}},
 *              "maxSteps": 20, "maxToolCalls": 60, "maxMinutes": 15, "maxRunning": 4}}
 * ```
 * A tier without a model uses the model of the turn that spawned the worker.
 */
import { PROVIDER_KINDS, type ModelSettings, type WorkerTier } from '@cellmate/protocol';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { configFilePath } from '../config/config-file.js';

/** The budget of one worker run. */
export interface WorkerBudget {
  maxSteps: number;
  maxToolCalls: number;
  maxMs: number;
}

export interface WorkerConfig {
  tiers: Partial<Record<WorkerTier, ModelSettings>>;
  budget: WorkerBudget;
  /** Workers running at once in this companion. */
  maxRunning: number;
  /** Why the file's `workers` section was ignored, if it was. */
  problem?: string;
}

export const DEFAULT_WORKER_BUDGET: WorkerBudget = { maxSteps: 20, maxToolCalls: 60, maxMs: 15 * 60_000 };
export const DEFAULT_MAX_RUNNING_WORKERS = 4;

const settings = z.strictObject({
  provider: z.enum(PROVIDER_KINDS),
  model: z.string(),
  baseUrl: z.string().optional(),
  scriptPath: z.string().optional(),
  acceptsImages: z.boolean().optional()
});

const section = z.strictObject({
  tiers: z.strictObject({ fast: settings.optional(), good: settings.optional() }).optional(),
  maxSteps: z.number().int().min(1).max(200).optional(),
  maxToolCalls: z.number().int().min(1).max(2000).optional(),
  maxMinutes: z
    .number()
    .min(0.05)
    .max(24 * 60)
    .optional(),
  maxRunning: z.number().int().min(1).max(32).optional()
});

/** Parses the `workers` section of the config file's JSON. Pure. */
export function parseWorkerConfig(json: unknown, origin = 'the config file'): WorkerConfig {
  const base: WorkerConfig = {
    tiers: {},
    budget: { ...DEFAULT_WORKER_BUDGET },
    maxRunning: DEFAULT_MAX_RUNNING_WORKERS
  };
  const raw = typeof json === 'object' && json !== null ? (json as { workers?: unknown }).workers : undefined;
  if (raw === undefined) return base;
  const parsed = section.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ...base,
      problem: `the "workers" section of ${origin} is ignored: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`
    };
  }
  const w = parsed.data;
  return {
    tiers: { ...(w.tiers?.fast ? { fast: w.tiers.fast } : {}), ...(w.tiers?.good ? { good: w.tiers.good } : {}) },
    budget: {
      maxSteps: w.maxSteps ?? DEFAULT_WORKER_BUDGET.maxSteps,
      maxToolCalls: w.maxToolCalls ?? DEFAULT_WORKER_BUDGET.maxToolCalls,
      maxMs: w.maxMinutes !== undefined ? Math.round(w.maxMinutes * 60_000) : DEFAULT_WORKER_BUDGET.maxMs
    },
    maxRunning: w.maxRunning ?? DEFAULT_MAX_RUNNING_WORKERS
  };
}

/** Reads the `workers` section of the home config file (read per spawn, so edits apply to the next worker). */
export async function loadWorkerConfig(env: NodeJS.ProcessEnv): Promise<WorkerConfig> {
  const file = configFilePath(env);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    // Missing or unreadable: defaults (loadConfigFile reports an unreadable file for the keys).
    return parseWorkerConfig(undefined);
  }
  return parseWorkerConfig(json, file);
}
