/**
 * Whether a cell's new outputs differ from its stored ones (pure, given the image check):
 * both sides normalised (`normalise.ts`), images by perceptual hash (`image-hash.ts`).
 * Returns the first difference in words, short enough for a result line.
 */
import { sameImage } from './image-hash.js';
import { comparableOutputs, type ComparableOutput, type NbOutput } from './normalise.js';

const clip = (s: string, n = 80): string => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

function describe(o: ComparableOutput | undefined): string {
  if (!o) return 'nothing';
  if (o.kind === 'image') return `an image (${o.mime})`;
  if (o.kind === 'error') return `${o.ename}: ${clip(o.evalue)}`;
  return `${o.channel.replace(/^(result|display):/, '')} "${clip(o.text)}"`;
}

/** The first line where two texts differ, as `"old" → "new"`. */
function firstLineDiff(a: string, b: string): string {
  const al = a.split('\n');
  const bl = b.split('\n');
  for (let i = 0; i < Math.max(al.length, bl.length); i++) {
    if (al[i] !== bl[i]) return `line ${i + 1}: "${clip(al[i] ?? '')}" → "${clip(bl[i] ?? '')}"`;
  }
  return 'text differs';
}

/** How the new outputs differ from the stored ones, or undefined when they match. */
export function outputDifference(
  stored: readonly NbOutput[],
  fresh: readonly NbOutput[],
  tempRoots: readonly string[] = []
): string | undefined {
  const a = comparableOutputs(stored, tempRoots);
  const b = comparableOutputs(fresh, tempRoots);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (!x || !y || x.kind !== y.kind) return `output ${i + 1}: stored ${describe(x)}, now ${describe(y)}`;
    if (x.kind === 'image' && y.kind === 'image') {
      if (!sameImage(x, y)) return `output ${i + 1}: the image differs (perceptual hash)`;
      continue;
    }
    if (x.kind === 'error' && y.kind === 'error') {
      if (x.ename !== y.ename || x.evalue !== y.evalue)
        return `output ${i + 1}: stored ${describe(x)}, now ${describe(y)}`;
      continue;
    }
    if (x.kind === 'text' && y.kind === 'text') {
      if (x.channel !== y.channel) return `output ${i + 1}: stored ${describe(x)}, now ${describe(y)}`;
      if (x.text !== y.text)
        return `output ${i + 1} (${x.channel.replace(/^(result|display):/, '')}) ${firstLineDiff(x.text, y.text)}`;
    }
  }
  return undefined;
}
