import { describe, expect, it } from 'vitest';

import { Signal } from '@lumino/signaling';

import { insertCodeCell } from '../src/notebook-copy';
import { NotebookFocus, type INotebookTrackerLike } from '../src/notebook-focus';
import { codeOf, formatElapsed } from '../src/tool-format';

/** A shared notebook with the operations the planner's steps use (the real one is Yjs, in the browser tests). */
function fakeShared(sources: string[]) {
  const cells = sources.map((s, i) => ({
    id: `c${i}`,
    cell_type: 'code',
    source: s,
    metadata: {},
    outputs: [],
    execution_count: null
  }));
  const wrap = (c: Record<string, unknown>) => ({ ...c, toJSON: () => c });
  return {
    raw: cells as Array<Record<string, unknown>>,
    get cells() {
      return this.raw.map(wrap);
    },
    transact(f: () => void) {
      f();
    },
    insertCells(index: number, add: Array<Record<string, unknown>>) {
      this.raw.splice(index, 0, ...add);
    }
  };
}

function fakeNotebook(id: string, active = 0) {
  const shared = fakeShared(['a', 'b']);
  return { id, isDisposed: false, shared, content: { activeCellIndex: active, model: { sharedModel: shared } } };
}

describe('copy to notebook', () => {
  it('inserts a marked code cell below the active cell through the planner and makes it active', () => {
    const nb = fakeNotebook('n1', 0);
    expect(insertCodeCell(nb as never, 'print(1)')).toBe(1);
    expect(nb.shared.raw[1]).toMatchObject({
      cell_type: 'code',
      source: 'print(1)',
      metadata: { cellmate: { created_by: 'agent-copy' } },
      outputs: [],
      execution_count: null
    });
    expect(nb.shared.raw[1]!.id).toMatch(/^[0-9a-f]{8}$/);
    expect(nb.content.activeCellIndex).toBe(1);
  });
});

describe('notebook focus service', () => {
  function fakePanel(path: string, kernelId: string) {
    const kernelChanged = new Signal<unknown, unknown>({});
    const sessionChanged = new Signal<unknown, unknown>({});
    const sc = {
      path,
      kernelChanged,
      sessionChanged,
      session: { kernel: { id: kernelId, name: 'python3', spec: Promise.resolve({ language: 'python' }) } }
    };
    return {
      isDisposed: false,
      sessionContext: sc,
      context: { path, localPath: path },
      content: { model: {}, widgets: [], isSelectedOrActive: () => false }
    };
  }

  it("follows the tracker's current notebook and its kernel; finds open notebooks by path", async () => {
    const a = fakePanel('a.ipynb', 'ka');
    const b = fakePanel('dir/b.ipynb', 'kb');
    const tracker = {
      currentWidget: null as unknown,
      currentChanged: new Signal<unknown, unknown>({}),
      filter: (f: (p: unknown) => boolean) => [a, b].filter(f)
    };
    const focus = new NotebookFocus(tracker as unknown as INotebookTrackerLike);
    const kernels: unknown[] = [];
    focus.kernelChanged.connect((_, k) => kernels.push(k));
    expect(focus.notebook).toBeNull();
    tracker.currentWidget = a;
    tracker.currentChanged.emit(a);
    await new Promise((r) => setTimeout(r, 0));
    expect(focus.kernel).toEqual({ id: 'ka', name: 'python3', language: 'python', notebookPath: 'a.ipynb' });
    a.sessionContext.session.kernel = { id: 'ka2', name: 'python3', spec: Promise.resolve({ language: 'python' }) };
    a.sessionContext.kernelChanged.emit(null);
    await new Promise((r) => setTimeout(r, 0));
    expect(focus.kernel?.id).toBe('ka2');
    expect(focus.find('./dir/b.ipynb')).toBe(b);
    expect(focus.context()).toEqual({ notebookPath: 'a.ipynb', selectedCells: [] });
    tracker.currentWidget = null;
    tracker.currentChanged.emit(null);
    await new Promise((r) => setTimeout(r, 0));
    expect(focus.kernel).toBeNull();
    expect(kernels.map((k) => (k as { id?: string } | null)?.id ?? null)).toEqual(['ka', 'ka2', null]);
    focus.dispose();
    a.sessionContext.kernelChanged.emit(null); // no longer followed
    expect(kernels).toHaveLength(3);
  });
});

describe('tool card helpers', () => {
  it('formats elapsed time like a clock', () => {
    expect(formatElapsed(0)).toBe('0:00');
    expect(formatElapsed(7_400)).toBe('0:07');
    expect(formatElapsed(65_000)).toBe('1:05');
    expect(formatElapsed(3_723_000)).toBe('1:02:03');
    expect(formatElapsed(-5)).toBe('0:00');
  });

  it('copies the code of eval cards only', () => {
    const base = { kind: 'tool', id: 'k', turnId: 't', time: '', callId: 'c', actor: 'model', status: 'ok' } as const;
    expect(codeOf({ ...base, name: 'eval', args: { code: 'x = 1' } })).toBe('x = 1');
    expect(codeOf({ ...base, name: 'eval', args: { code: '  ' } })).toBeNull();
    expect(codeOf({ ...base, name: 'read', args: { code: 'x' } })).toBeNull();
  });
});
