import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let jsdiff: typeof import('diff') | undefined;

/** Unified diff hunks of two texts (3 lines of context), without file headers or `\ No newline` markers. */
export function unifiedDiff(before: string, after: string): string {
  jsdiff ??= require('diff') as typeof import('diff'); // on first use: not at start-up
  const patch = jsdiff.structuredPatch('a', 'b', before, after, '', '', { context: 3 });
  return patch.hunks
    .map((h) =>
      [
        `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
        ...h.lines.filter((l) => !l.startsWith('\\'))
      ].join('\n')
    )
    .join('\n');
}
