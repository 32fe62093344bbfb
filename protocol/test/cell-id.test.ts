/**
 * The one cell-id maker the disk path (server) and the open notebook (pane) share: 8 hex
 * digits, as JupyterLab makes them, never one the notebook already has.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newCellId } from '../src/cell-id.js';

afterEach(() => vi.restoreAllMocks());

describe('newCellId: one maker for server and pane', () => {
  it('makes 8-hex-digit ids that differ from each other', () => {
    const ids = Array.from({ length: 200 }, () => newCellId(new Set()));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(ids).size).toBeGreaterThan(195);
  });

  it('draws again when the random id is already taken', () => {
    const draws = [
      [0xab, 0xcd, 0xef, 0x01],
      [0x00, 0x00, 0x00, 0x0f]
    ];
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation((array) => {
      (array as Uint8Array).set(draws.shift()!);
      return array;
    });
    expect(newCellId(new Set(['abcdef01']))).toBe('0000000f');
    expect(spy).toHaveBeenCalledTimes(2);
  });
});
