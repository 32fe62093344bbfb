/**
 * What an inline completion sends besides the cell itself: the code cells around it,
 * bounded. Pure, so it is tested in Node.
 */

/** Cells above and below the active one sent at most, and characters of each. */
export const NEIGHBOUR_CELLS = { above: 5, below: 3, chars: 2_000 } as const;

/** The code cells around `index`, nearest last above and nearest first below, each cut to its bound. Pure. */
export function neighbours(sources: readonly string[], index: number): { cellsAbove: string[]; cellsBelow: string[] } {
  const cut = (s: string, keepEnd: boolean): string =>
    s.length <= NEIGHBOUR_CELLS.chars
      ? s
      : keepEnd
        ? s.slice(-NEIGHBOUR_CELLS.chars)
        : s.slice(0, NEIGHBOUR_CELLS.chars);
  const above = sources
    .slice(0, Math.max(0, index))
    .filter((s) => s.trim())
    .slice(-NEIGHBOUR_CELLS.above)
    .map((s) => cut(s, true));
  const below = sources
    .slice(index + 1)
    .filter((s) => s.trim())
    .slice(0, NEIGHBOUR_CELLS.below)
    .map((s) => cut(s, false));
  return { cellsAbove: above, cellsBelow: below };
}
