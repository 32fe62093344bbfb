/**
 * Cell sources spliced into raw .ipynb JSON (EDIT-3, RENAME-1): only the changed `source`
 * values differ, byte for byte; the result validates with the venv's nbformat; the new
 * source keeps the old one's shape. Fixture: fixtures/greetings.ipynb, written by
 * nbformat itself (ids, outputs with an image, attachments, tags, non-ASCII, an empty source).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EditError, locateCellSources, spliceCellSources } from '../../src/edits/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = path.resolve(here, '../../../.venv/bin/python');
const RAW = readFileSync(path.join(here, 'fixtures', 'greetings.ipynb'), 'utf8');

type Read = { cells: Array<{ source: string }> };
/** Validates notebooks with nbformat (the venv's; one Python for all), returning them as nbformat reads them. */
function nbformatRead(...texts: string[]): Read[] {
  const script =
    'import nbformat, sys, json\nout = []\nfor t in json.load(sys.stdin):\n    nb = nbformat.reads(t, as_version=4)\n    nbformat.validate(nb)\n    out.append(nb)\nprint(json.dumps(out))';
  return JSON.parse(execFileSync(PYTHON, ['-c', script], { input: JSON.stringify(texts), encoding: 'utf8' })) as Read[];
}

/** The text between (and around) the source values, which must not change. */
function outsideSources(text: string): string[] {
  const spans = locateCellSources(text).filter((s) => s !== undefined);
  const gaps: string[] = [];
  let at = 0;
  for (const s of spans) {
    gaps.push(text.slice(at, s!.start));
    at = s!.end;
  }
  gaps.push(text.slice(at));
  return gaps;
}

const join = (s: string | string[]) => (Array.isArray(s) ? s.join('') : s);

describe('spliceCellSources', () => {
  it('changes only the named sources; everything else byte-identical; valid nbformat; Jupyter line-list shape kept', () => {
    const next = spliceCellSources(RAW, [
      { index: 1, source: 'from helper import hello\n\nmessage = hello("wörld")\nprint(message)' },
      { index: 4, source: 'import matplotlib\n%matplotlib inline\nplot(hello)\n' },
      { index: 0, source: '# Greeting demo\n\nUses `hello` — wörld, 日本.' }
    ]);
    expect(outsideSources(next)).toEqual(outsideSources(RAW));
    const before = JSON.parse(RAW) as { cells: Array<Record<string, unknown>> };
    const after = JSON.parse(next) as { cells: Array<Record<string, unknown>> };
    // Parsed: the same notebook except the three sources.
    expect(after.cells.map((c, i) => ([0, 1, 4].includes(i) ? { ...c, source: before.cells[i]!.source } : c))).toEqual(
      before.cells
    );
    expect(join(after.cells[1]!.source as string[])).toBe(
      'from helper import hello\n\nmessage = hello("wörld")\nprint(message)'
    );
    // Jupyter's own shape: a list of lines, indented like the rest of the file.
    expect(next).toContain(
      '   "source": [\n    "from helper import hello\\n",\n    "\\n",\n    "message = hello(\\"wörld\\")\\n",\n    "print(message)"\n   ]'
    );
    const [read] = nbformatRead(next) as [Read];
    expect(read.cells[4]!.source).toBe('import matplotlib\n%matplotlib inline\nplot(hello)\n');
    expect(read.cells[1]!.source).toContain('hello("wörld")');
  });

  it("an empty source list gets the file's indentation; a string source stays a string; emptying gives []", () => {
    const asString =
      JSON.stringify(
        {
          ...JSON.parse(RAW),
          cells: [{ cell_type: 'code', id: 'a', metadata: {}, execution_count: null, outputs: [], source: 'x = 1' }]
        },
        null,
        1
      ) + '\n';
    expect(spliceCellSources(asString, [{ index: 0, source: 'x = 2\ny = 3' }])).toContain('"source": "x = 2\\ny = 3"');
    const filled = spliceCellSources(RAW, [{ index: 3, source: 'a = 1\nb = 2' }]);
    expect(filled).toContain('   "source": [\n    "a = 1\\n",\n    "b = 2"\n   ]');
    expect(outsideSources(filled)).toEqual(outsideSources(RAW));
    const emptied = spliceCellSources(RAW, [{ index: 2, source: '' }]);
    const [e] = nbformatRead(emptied, filled) as [Read, Read];
    expect(e.cells[2]!.source).toBe('');
  });

  it('other layouts: minified JSON and CRLF line ends stay as they are outside the changed source', () => {
    const minified = JSON.stringify(JSON.parse(RAW));
    const m = spliceCellSources(minified, [{ index: 2, source: 'hello\nworld' }]);
    expect(outsideSources(m)).toEqual(outsideSources(minified));
    expect(m).toContain('"source":["hello\\n","world"]');
    const crlf = RAW.replace(/\n/g, '\r\n');
    const c = spliceCellSources(crlf, [{ index: 3, source: 'z = 0\n' }]);
    expect(outsideSources(c)).toEqual(outsideSources(crlf));
    expect(c).toContain('"source": [\r\n    "z = 0\\n"\r\n   ]');
    nbformatRead(m, c);
  });

  it('keys that merely look like sources (in metadata, in outputs) are not touched', () => {
    const tricky = RAW.replace('"tags": [', '"source": "not a cell source", "tags": [');
    const spans = locateCellSources(tricky);
    expect(tricky.slice(spans[1]!.start, spans[1]!.end)).toContain('from helper import greet');
    expect(spliceCellSources(tricky, [{ index: 1, source: 'x' }])).toContain('"source": "not a cell source"');
  });

  it('bad input is an EditError: not JSON, no such cell, a cell twice', () => {
    expect(() => spliceCellSources(RAW.slice(0, -5), [{ index: 0, source: 'x' }])).toThrow(EditError);
    expect(() => spliceCellSources(RAW, [{ index: 17, source: 'x' }])).toThrow(/no cell 18/);
    expect(() =>
      spliceCellSources(RAW, [
        { index: 1, source: 'x' },
        { index: 1, source: 'y' }
      ])
    ).toThrow(/changed twice/);
  });
});
