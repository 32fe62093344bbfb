/**
 * Known secret values kept out of everything a tool call produces: the
 * values of every variable the child-environment scrub removes (from the companion's
 * environment) and the API keys of `~/.cellmate/config.json`. {@link Redactor.redact}
 * replaces each with `[redacted]`; the registry applies it to every tool result (output,
 * title, display MIME bundles, metadata) before the model, the transcript events,
 * `chat/get`, the chat file or the audit log see it, and to progress lines.
 *
 * Values shorter than {@link MIN_SECRET_CHARS} are not redacted: replacing `1` or `true`
 * everywhere would destroy outputs and such values are not credentials worth the name.
 */
import type { LoadedConfig } from '../config/config-file.js';
import { scrubbedValues } from './child-env.js';

/** Shorter values are not redacted (see the module comment). */
export const MIN_SECRET_CHARS = 8;
/** The replacement text. */
export const REDACTED = '[redacted]';

/** A growing set of secret values and the one function that hides them. */
export class Redactor {
  private values: string[] = [];

  /** Starts with the scrubbed values of each environment given. */
  constructor(...envs: NodeJS.ProcessEnv[]) {
    for (const env of envs) this.add(scrubbedValues(env));
  }

  /** Adds secret values (short and empty ones are ignored). */
  add(values: Iterable<string | undefined>): void {
    const next = new Set(this.values);
    for (const v of values) {
      const value = v?.trim();
      if (value && value.length >= MIN_SECRET_CHARS) next.add(value);
    }
    // Longest first, so a key that contains another is replaced whole.
    this.values = [...next].sort((a, b) => b.length - a.length);
  }

  /** Adds the API keys of the config file. */
  addConfig(config: LoadedConfig): void {
    this.add(Object.values(config.config.apiKeys));
  }

  /** How many values are known (tests, logs). */
  get size(): number {
    return this.values.length;
  }

  /**
   * `text` with every known value replaced. With `partialTail`, a tail that is the start
   * of a value (a key cut between two chunks of a progress line) is hidden too.
   */
  redact(text: string, options: { partialTail?: boolean } = {}): string {
    let out = text;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join(REDACTED);
    if (options.partialTail) {
      for (const v of this.values) {
        for (let n = Math.min(v.length - 1, out.length); n >= 4; n--) {
          if (out.endsWith(v.slice(0, n))) {
            out = `${out.slice(0, out.length - n)}${REDACTED}`;
            break;
          }
        }
      }
    }
    return out;
  }

  /** A JSON-like value with every string inside redacted (objects and arrays copied). */
  redactDeep<T>(value: T): T {
    if (this.values.length === 0) return value;
    return mapStrings(value, (s) => this.redact(s)) as T;
  }
}

/** A JSON-like value with `fn` applied to every string inside (plain objects and arrays copied). */
export function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  }
  return value;
}
