/**
 * Pure helpers of tool cards (no DOM): elapsed time of a running call — the one clock the
 * pane shows, for workers too — and the code a card can copy into a notebook.
 */
import type { ToolCallItem } from '@cellmate/protocol';

/** `0:07`, `1:05`, `1:02:03` — a running call's or worker's elapsed time. */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor((Number.isFinite(ms) ? ms : 0) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** The code a card can copy into a notebook: eval's `code` argument. */
export function codeOf(item: ToolCallItem): string | null {
  if (item.name !== 'eval' || typeof item.args !== 'object' || item.args === null) {
    return null;
  }
  const code = (item.args as { code?: unknown }).code;
  return typeof code === 'string' && code.trim() ? code : null;
}
