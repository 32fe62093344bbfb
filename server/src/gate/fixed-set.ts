import type { ToolSurface } from '../ports/vocabulary.js';

/**
 * Which tools are declared in full to the model, by surface name (HARN-11).
 * Every other tool on the surface is deferred: one line in `tool_search`'s index, its
 * schema loaded on demand and called through `call_tool`. A plain table so a mode profile
 * can add its own row (the row for its `name`); a surface without a row uses `default`.
 * Names a registry does not have, or a surface does not show, are skipped.
 *
 * The default row keeps the request within the ≤ 2,500-token budget of `npm run bench --
 * catalog` (tools + system prompt of the real request body, every built-in tool
 * registered): `read` and `ask_user` (the only way to ask, ASK-1) in full. `edit`
 * (~550 tokens), `eval` (~1,300), the notebook tools (~550–1,200 each) did not fit; they
 * cost one `tool_search` the first time in a chat, and stay loaded for it. The bench
 * prints each tool's cost for choosing a row.
 */
export const FIXED_TOOLS: Readonly<Record<string, readonly string[]>> = {
  default: ['read', 'ask_user'],
  // The read-only modes declare their artifact tools and the pinned ones (MODE-6) in full, so
  // their rows fit the same budget: `read` (~460 tokens) is one `tool_search` away there, as
  // is `approve_review_node`, which only a review with peer workers uses.
  // Plan mode's artifact and its exit (MODE-3): a Plan turn exists to call them.
  plan: ['ask_user', 'submit_plan', 'exit_plan_mode'],
  // Review's findings and verdict (MODE-4): a Review turn exists to call them.
  review: ['ask_user', 'add_review_node', 'finalize_review'],
  // Orchestrate mode's artifact (MODE-5): an Orchestrate turn exists to call it.
  orchestrate: ['ask_user', 'propose_orchestration']
};

/** The tools that carry the catalog itself: always declared when anything is deferred. */
export const CATALOG_TOOLS: readonly string[] = ['tool_search', 'call_tool'];

/** The fixed tool names for a surface (its own row, else `default`). */
export function fixedToolNames(
  surface?: ToolSurface,
  table: Readonly<Record<string, readonly string[]>> = FIXED_TOOLS
): ReadonlySet<string> {
  const row = (surface?.name !== undefined ? table[surface.name] : undefined) ?? table.default ?? [];
  return new Set(row);
}
