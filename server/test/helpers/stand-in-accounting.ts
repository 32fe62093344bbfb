/**
 * Token and prompt-cache accounting for the provider stand-in: how many prompt tokens a
 * request body holds, and how much of it a provider's prompt cache would have served.
 *
 * Counting is cheap and deterministic rather than a real tokenizer: a request is cut into
 * blocks (each declared tool, each system block, each message or content part), a block's
 * canonical JSON (keys sorted, `cache_control` dropped, image payloads left out) counts
 * `ceil(chars / 4)` tokens, and an image counts what the provider bills for its pixels
 * (PNG size read from its header; 1,000 tokens when the size cannot be read). A request's
 * prompt tokens are the sum over its blocks, so the overflow check, the usage reported and
 * the cache figures all agree. A test may pass its own `tokenizer` (e.g. js-tiktoken).
 */
import { createHash } from 'node:crypto';

/** The providers with a real HTTP wire (kept in step with provider-stand-in.ts). */
type Wire = 'openai' | 'anthropic' | 'openai-compatible';

/** Counts the tokens of a block's text (images are counted apart). */
export type Tokenizer = (text: string) => number;

/** What the stand-in bills for one request. */
export interface StandInUsage {
  /** Every prompt token: tools, system and messages. */
  promptTokens: number;
  /** Prompt tokens served from the simulated cache. */
  cachedTokens: number;
  /** Prompt tokens written to the cache (Anthropic only: the span up to its last breakpoint). */
  cacheWriteTokens: number;
}

interface Block {
  /** Hash of the block's canonical JSON. */
  hash: string;
  tokens: number;
  /** Anthropic: the block carries a `cache_control` breakpoint. */
  breakpoint: boolean;
}

/** Anthropic: shortest prefix it caches (Sonnet/Opus; Haiku's is 2,048). */
export const ANTHROPIC_MIN_CACHE_TOKENS = 1024;
/** Anthropic: block boundaries looked at before a breakpoint for an earlier cache entry. */
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;
/** OpenAI: shortest prefix served from cache, and the step cached spans grow by. */
export const OPENAI_MIN_CACHE_TOKENS = 1024;
export const OPENAI_CACHE_STEP = 128;
const UNKNOWN_IMAGE_TOKENS = 1000;

/** The default count: a quarter of the characters, rounded up. */
export const quarterChars: Tokenizer = (text) => Math.ceil(text.length / 4);

/**
 * One provider's accounting across the requests of a stand-in's life: the cache it
 * simulates is what the earlier requests (those answered, not refused) left behind.
 */
export class PromptAccounting {
  /** Block cost by the block's raw JSON: a long chat resends the same blocks every step. */
  private readonly blockMemo = new Map<string, { hash: string; tokens: number; breakpoint: boolean }>();
  /** Anthropic: prefixes written at breakpoints. OpenAI: every block-boundary prefix seen. */
  private readonly cached = new Set<string>();

  constructor(
    private readonly provider: Wire,
    private readonly tokenizer: Tokenizer = quarterChars
  ) {}

  /** Prompt tokens of a request body, without touching the cache. */
  promptTokens(body: Record<string, unknown>): number {
    return this.blocks(body).reduce((sum, b) => sum + b.tokens, 0);
  }

  /**
   * Prompt tokens and cache figures of a request. What the request leaves in the cache is
   * recorded only if `accept(promptTokens)`: a refused request was never processed.
   */
  bill(
    body: Record<string, unknown>,
    accept: (promptTokens: number) => boolean = () => true
  ): StandInUsage & { accepted: boolean } {
    const blocks = this.blocks(body);
    const prefixes: string[] = [];
    const cumulative: number[] = [];
    let chain = '';
    let total = 0;
    for (const b of blocks) {
      chain = sha1(chain + b.hash);
      total += b.tokens;
      prefixes.push(chain);
      cumulative.push(total);
    }
    const accepted = accept(total);
    const usage =
      this.provider === 'anthropic'
        ? this.billAnthropic(blocks, prefixes, cumulative, total, accepted)
        : this.billOpenAI(prefixes, cumulative, total, accepted);
    return { ...usage, accepted };
  }

  /**
   * Anthropic caches only at `cache_control` breakpoints: a read is the longest prefix,
   * ending within the lookback before one of this request's breakpoints, that an earlier
   * request wrote; the write is the rest up to the last breakpoint.
   */
  private billAnthropic(
    blocks: Block[],
    prefixes: string[],
    cumulative: number[],
    total: number,
    commit: boolean
  ): StandInUsage {
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let read = 0;
    for (const bp of breakpoints) {
      for (let j = bp; j >= Math.max(0, bp - ANTHROPIC_LOOKBACK_BLOCKS + 1); j--) {
        if (this.cached.has(prefixes[j]!)) {
          read = Math.max(read, cumulative[j]!);
          break;
        }
      }
    }
    const last = breakpoints.at(-1);
    const upTo = last === undefined ? 0 : cumulative[last]!;
    const write = upTo >= ANTHROPIC_MIN_CACHE_TOKENS ? Math.max(0, upTo - read) : 0;
    if (commit) {
      for (const bp of breakpoints) if (cumulative[bp]! >= ANTHROPIC_MIN_CACHE_TOKENS) this.cached.add(prefixes[bp]!);
    }
    return { promptTokens: total, cachedTokens: read, cacheWriteTokens: write };
  }

  /** OpenAI caches automatically: the longest prefix any earlier request shared, in 128-token steps from 1,024. */
  private billOpenAI(prefixes: string[], cumulative: number[], total: number, commit: boolean): StandInUsage {
    let common = 0;
    for (let i = prefixes.length - 1; i >= 0; i--) {
      if (this.cached.has(prefixes[i]!)) {
        common = cumulative[i]!;
        break;
      }
    }
    const cachedTokens =
      common >= OPENAI_MIN_CACHE_TOKENS ? Math.floor(common / OPENAI_CACHE_STEP) * OPENAI_CACHE_STEP : 0;
    if (commit) for (const p of prefixes) this.cached.add(p);
    return { promptTokens: total, cachedTokens, cacheWriteTokens: 0 };
  }

  /** The request in the provider's prompt order (tools, system, messages), one block per cacheable unit. */
  private blocks(body: Record<string, unknown>): Block[] {
    const out: Block[] = [];
    const add = (value: unknown, tag: string): void => {
      const raw = tag + JSON.stringify(value);
      let cost = this.blockMemo.get(raw);
      if (!cost) {
        const walked = canonical(value, this.provider);
        cost = {
          hash: sha1(tag + walked.json),
          tokens: this.tokenizer(walked.text) + walked.imageTokens,
          breakpoint:
            typeof value === 'object' &&
            value !== null &&
            'cache_control' in value &&
            (value as { cache_control?: unknown }).cache_control != null
        };
        this.blockMemo.set(raw, cost);
      }
      out.push(cost);
    };
    for (const tool of asArray(body.tools)) add(tool, 'tool:');
    if (this.provider === 'anthropic') {
      const system = body.system;
      if (typeof system === 'string') add(system, 'system:');
      else for (const part of asArray(system)) add(part, 'system:');
      for (const message of asArray(body.messages)) {
        const { role, content } = message as { role?: string; content?: unknown };
        if (typeof content === 'string') add(content, `${role}:`);
        // The role opens a message's first part, so two messages never hash alike.
        else asArray(content).forEach((part, i) => add(part, i === 0 ? `${role}:` : '+'));
      }
    } else if (this.provider === 'openai') {
      if (body.instructions !== undefined) add(body.instructions, 'instructions:');
      for (const item of asArray(body.input)) add(item, 'input:');
    } else {
      for (const message of asArray(body.messages)) add(message, 'message:');
    }
    return out;
  }
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const sha1 = (text: string): string => createHash('sha1').update(text).digest('base64');

/**
 * A value's canonical JSON (sorted keys, no `cache_control`, so a moved breakpoint keeps a
 * prefix's hash), the text its tokens are counted from (the JSON without image payloads)
 * and its images' tokens.
 */
function canonical(value: unknown, provider: Wire): { json: string; text: string; imageTokens: number } {
  let imageTokens = 0;
  const walk = (v: unknown, parent?: Record<string, unknown>): [string, string] => {
    if (typeof v === 'string') {
      const image = imageData(v, parent);
      const json = JSON.stringify(v);
      if (image === undefined) return [json, json];
      imageTokens += imageTokensOf(image, provider);
      return [json, '"<image>"'];
    }
    if (Array.isArray(v)) {
      const parts = v.map((x) => walk(x));
      return [`[${parts.map((p) => p[0]).join(',')}]`, `[${parts.map((p) => p[1]).join(',')}]`];
    }
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o)
        .filter((k) => k !== 'cache_control' && o[k] !== undefined)
        .sort();
      const parts = keys.map((k) => {
        const [json, text] = walk(o[k], o);
        return [`${JSON.stringify(k)}:${json}`, `${JSON.stringify(k)}:${text}`];
      });
      return [`{${parts.map((p) => p[0]).join(',')}}`, `{${parts.map((p) => p[1]).join(',')}}`];
    }
    const json = JSON.stringify(v) ?? 'null';
    return [json, json];
  };
  const [json, text] = walk(value);
  return { json, text, imageTokens };
}

/** The base64 payload of an image string: a data URL, or Anthropic's `{type: 'base64', media_type: 'image/…', data}`. */
function imageData(text: string, parent?: Record<string, unknown>): string | undefined {
  if (text.startsWith('data:image/')) return text.slice(text.indexOf(',') + 1);
  if (
    parent &&
    parent.type === 'base64' &&
    typeof parent.media_type === 'string' &&
    parent.media_type.startsWith('image/') &&
    parent.data === text
  )
    return text;
  return undefined;
}

/** What a provider bills for an image of the PNG's size. */
function imageTokensOf(base64: string, provider: Wire): number {
  const header = Buffer.from(base64.slice(0, 32), 'base64');
  if (header.length < 24 || header.toString('latin1', 1, 4) !== 'PNG') return UNKNOWN_IMAGE_TOKENS;
  let w = header.readUInt32BE(16);
  let h = header.readUInt32BE(20);
  if (provider === 'anthropic') {
    // Scaled to a long edge of at most 1,568 px and ~1.15 megapixels, then w·h/750.
    const scale = Math.min(1, 1568 / Math.max(w, h), Math.sqrt(1_150_000 / (w * h)));
    return Math.ceil((Math.round(w * scale) * Math.round(h * scale)) / 750);
  }
  // OpenAI high detail: fit in 2,048², shortest side at most 768, then 170 per 512-px tile + 85.
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, 768 / Math.min(w, h));
  w *= shrink;
  h *= shrink;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}
