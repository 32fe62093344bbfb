/**
 * Whether two images show the same thing: a perceptual hash (blockhash, `blockhash-core`)
 * of each decoded PNG (`fast-png`; both pure JavaScript, so nothing is compiled or
 * downloaded at install). A figure re-rendered from the same data hashes the same even when
 * its bytes differ (encoder, metadata, antialiasing); a moved line flips blocks.
 */
import { bmvbhash } from 'blockhash-core';
import { decode } from 'fast-png';

/** Bits per side of the hash grid: 16 × 16 = 256 bits, fine enough to see one line move. */
const HASH_BITS = 16;
/**
 * Differing bits still counted as the same picture. Re-renders of one figure land at 0–2
 * (antialiasing at block edges); a changed line in a small plot flips a dozen or more.
 */
export const SAME_IMAGE_MAX_DISTANCE = 6;

/** The image's perceptual hash (hex), or undefined when it cannot be decoded as PNG. */
export function perceptualHash(base64: string, mime = 'image/png'): string | undefined {
  if (mime !== 'image/png') return undefined;
  let png: ReturnType<typeof decode>;
  try {
    png = decode(Buffer.from(base64, 'base64'));
  } catch {
    return undefined;
  }
  const rgba = toRgba8(png);
  if (!rgba || png.width < 1 || png.height < 1) return undefined;
  return bmvbhash({ width: png.width, height: png.height, data: rgba }, HASH_BITS);
}

/** Number of differing bits of two hex hashes of equal length (Infinity when lengths differ). */
export function hammingDistance(a: string, b: string): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = parseInt(a[i]!, 16) ^ parseInt(b[i]!, 16);
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}

/**
 * Whether two base64 images show the same picture: by perceptual hash when both decode,
 * else by their bytes (a format this module cannot decode is compared exactly).
 */
export function sameImage(a: { base64: string; mime: string }, b: { base64: string; mime: string }): boolean {
  if (a.base64 === b.base64) return true;
  const ha = perceptualHash(a.base64, a.mime);
  const hb = perceptualHash(b.base64, b.mime);
  if (ha === undefined || hb === undefined) return false;
  return hammingDistance(ha, hb) <= SAME_IMAGE_MAX_DISTANCE;
}

/** RGBA, 8 bits per channel, from whatever the PNG holds (grey, grey+alpha, RGB, palette, 16-bit). */
function toRgba8(png: ReturnType<typeof decode>): Uint8Array | undefined {
  const { width, height, channels, depth, data } = png;
  const n = width * height;
  const out = new Uint8Array(n * 4);
  const palette = (png as { palette?: number[][] }).palette;
  const sample = (i: number): number => {
    const v = (data as ArrayLike<number>)[i] ?? 0;
    return depth === 16 ? v >> 8 : depth < 8 && !palette ? Math.round((v * 255) / ((1 << depth) - 1)) : v;
  };
  if ((data as ArrayLike<number>).length < n * channels) return undefined;
  for (let p = 0; p < n; p++) {
    const o = p * 4;
    if (palette) {
      const entry = palette[(data as ArrayLike<number>)[p] ?? 0] ?? [0, 0, 0, 255];
      out[o] = entry[0] ?? 0;
      out[o + 1] = entry[1] ?? 0;
      out[o + 2] = entry[2] ?? 0;
      out[o + 3] = entry[3] ?? 255;
      continue;
    }
    const b = p * channels;
    if (channels >= 3) {
      out[o] = sample(b);
      out[o + 1] = sample(b + 1);
      out[o + 2] = sample(b + 2);
      out[o + 3] = channels === 4 ? sample(b + 3) : 255;
    } else {
      const g = sample(b);
      out[o] = out[o + 1] = out[o + 2] = g;
      out[o + 3] = channels === 2 ? sample(b + 1) : 255;
    }
  }
  return out;
}
