import type { ToolActor, ToolCallDisplay } from '@cellmate/protocol';
import type { z } from 'zod';

/**
 * What a tool may do, which decides which surfaces see it (SPEC TIER-1): `read` has no
 * side effects, `write` changes files, `exec` starts or controls a process.
 */
export type ToolTier = 'read' | 'write' | 'exec';

/** What every tool call gets besides its arguments. */
export interface ToolContext {
  /** Absolute path of the workspace root. */
  workspace: string;
  /** Aborted when the user stops the turn or the tool's timeout passes. */
  signal: AbortSignal;
  /** Who caused the call. */
  actor: ToolActor;
  /** The chat the call belongs to. */
  chatId: string;
}

/** What a tool returns on success. */
export interface ToolOutput {
  /** Short title for the transcript card, e.g. `notes.md (lines 1–40 of 40)`. */
  title: string;
  /** The text the model receives. */
  output: string;
  /** Structured extras for the pane or audit; never sent to the model. */
  metadata?: Record<string, unknown>;
  /** Images handed to the model with `output` when it accepts images (eval's figures). */
  attachments?: ToolAttachment[];
  /** Rich parts of the transcript card (eval: kernel, rewrites, MIME outputs); not for the model. */
  display?: ToolCallDisplay;
}

/** An image attached to a tool result. */
export interface ToolAttachment {
  type: 'image';
  mediaType: string;
  /** Base64. */
  data: string;
}

/** An example call shown to the model in the tool's description (SPEC HARN-1). */
export interface ToolExample<A> {
  args: A;
  /** When this call is the right one. */
  comment: string;
}

/** A tool, as a value. Build with {@link defineTool}. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  tier: ToolTier;
  /** Long description (from the tool's sibling `.md` file). */
  description: string;
  /** Argument schema; the registry validates against it before `execute` runs. */
  parameters: S;
  examples: ReadonlyArray<ToolExample<z.input<S>>>;
  /** Per-call time budget; the registry aborts `ctx.signal` when it passes. */
  timeoutMs?: number;
  /**
   * How long outputs are shaped (SPEC HARN-4). `auto` (default): the registry cuts outputs
   * over 200 lines / 10,000 characters to head + tail and saves the full text under
   * `.cellmate/outputs/`. `paged`: the tool pages explicitly itself (offset/limit with a
   * "call again with offset=…" note, like `read` and `grep`), so the registry leaves it.
   */
  outputShaping?: 'auto' | 'paged';
  /** Runs the tool on validated arguments. Throw `ToolInputError` for model-fixable errors. */
  execute(args: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Identity helper that keeps the argument types of `execute` tied to `parameters`. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(definition.name)) {
    throw new Error(`Tool name "${definition.name}" must be snake_case (a-z, 0-9, _).`);
  }
  return definition;
}
