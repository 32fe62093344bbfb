import { describe, expect, it } from 'vitest';

import { Signal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import { insertCodeCell, isNotebookLike, NotebookCopyTarget } from '../src/notebook-copy';
import { codeOf, formatElapsed } from '../src/tool-format';

function fakeNotebook(id: string, active = 0) {
  const cells: Array<Record<string, unknown>> = [{ source: 'a' }, { source: 'b' }];
  return {
    id,
    isDisposed: false,
    cells,
    content: {
      activeCellIndex: active,
      model: { sharedModel: { insertCell: (index: number, cell: Record<string, unknown>) => cells.splice(index, 0, cell) } }
    }
  };
}

describe('copy to notebook', () => {
  it('inserts a marked code cell below the active cell and makes it active', () => {
    const nb = fakeNotebook('n1', 0);
    expect(isNotebookLike(nb)).toBe(true);
    expect(insertCodeCell(nb, 'print(1)')).toBe(1);
    expect(nb.cells[1]).toEqual({ cell_type: 'code', source: 'print(1)', metadata: { cellmate: { created_by: 'agent-copy' } } });
    expect(nb.content.activeCellIndex).toBe(1);
  });

  it('targets the current notebook, else the last focused one', () => {
    const shell = { currentWidget: null as unknown, currentChanged: new Signal<unknown, { newValue: Widget | null }>({}) };
    const target = new NotebookCopyTarget(shell as never);
    expect(target.notebook).toBeNull();
    const nb = fakeNotebook('n1');
    shell.currentWidget = nb;
    shell.currentChanged.emit({ newValue: nb as unknown as Widget });
    const editor = { id: 'editor' };
    shell.currentWidget = editor;
    shell.currentChanged.emit({ newValue: editor as unknown as Widget });
    expect(target.notebook?.id).toBe('n1');
    nb.isDisposed = true;
    expect(target.notebook).toBeNull();
    target.dispose();
    expect(isNotebookLike({ content: {} })).toBe(false);
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
