/**
 * Kernel focus is keyed by connection (issue #9, SPEC EVAL-2): two windows never overwrite
 * each other's focused notebook; a turn uses the focus of the connection that started it,
 * also after that connection closed, until the chat's next turn comes from elsewhere.
 * The browser test with two pages on two notebooks is test/e2e/kernel-focus.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { KernelFocus } from '../../src/kernels/kernel-focus.js';

const nbA = { id: 'kernel-a', name: 'python3', language: 'python', notebookPath: 'a.ipynb' };
const nbB = { id: 'kernel-b', name: 'python3', language: 'python', notebookPath: 'b.ipynb' };

describe('KernelFocus', () => {
  it('each connection keeps its own focus; a chat resolves through the connection of its turn', () => {
    const f = new KernelFocus();
    f.set('w1', undefined, nbA);
    f.set('w2', undefined, nbB);
    expect(f.kernelFor({ chatId: 'c1', connection: 'w1' })).toEqual(nbA);
    expect(f.kernelFor({ chatId: 'c1', connection: 'w2' })).toEqual(nbB);
    expect(f.kernelFor({ chatId: 'c1' })).toBeNull(); // no turn yet: no focus, the private kernel
    f.bindTurn('c1', 'w1');
    f.bindTurn('c2', 'w2');
    expect(f.kernelFor({ chatId: 'c1' })).toEqual(nbA);
    expect(f.kernelFor({ chatId: 'c2' })).toEqual(nbB);
    // The same chat sent from the other window now evals there.
    f.bindTurn('c1', 'w2');
    expect(f.kernelFor({ chatId: 'c1' })).toEqual(nbB);
  });

  it('a per-chat focus overrides the connection focus of that connection only', () => {
    const f = new KernelFocus();
    f.set('w1', undefined, nbA);
    f.set('w1', 'c1', nbB);
    expect(f.kernelFor({ chatId: 'c1', connection: 'w1' })).toEqual(nbB);
    expect(f.kernelFor({ chatId: 'c2', connection: 'w1' })).toEqual(nbA);
    expect(f.kernelFor({ chatId: 'c1', connection: 'w2' })).toBeNull();
    f.set('w1', undefined, null);
    expect(f.kernelFor({ chatId: 'c2', connection: 'w1' })).toBeNull();
  });

  it('a turn outlives its connection: the closed connection focus holds until the chat is bound elsewhere', () => {
    const f = new KernelFocus();
    f.set('w1', undefined, nbA);
    f.set('w3', undefined, nbB);
    f.bindTurn('c1', 'w1');
    f.connectionClosed('w1');
    expect(f.kernelFor({ chatId: 'c1' })).toEqual(nbA);
    f.connectionClosed('w3'); // nothing bound to it: forgotten at once
    expect(f.size).toBe(1);
    f.set('w2', undefined, nbB);
    f.bindTurn('c1', 'w2');
    expect(f.size).toBe(1); // w1 is gone now
    expect(f.kernelFor({ chatId: 'c1', connection: 'w1' })).toBeNull();
    f.retainChats(new Set());
    expect(f.kernelFor({ chatId: 'c1' })).toBeNull();
  });
});
