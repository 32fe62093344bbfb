import { describe, expect, it } from 'vitest';
import { argumentFields } from '../src/argument-fields';

describe("argumentFields: a call's arguments as a person reads them (HARN-6)", () => {
  it('keeps strings verbatim, one block per multi-line or long value, lists joined, nested data as JSON', () => {
    expect(
      argumentFields({
        command: 'echo "it\'s done" > out.txt\nrm -rf src',
        cell_id: 'load',
        lines: [3, 4],
        dry_run: false,
        timeout: 30,
        where: { file: 'a.py', line: 2 },
        empty: '',
        none: null
      })
    ).toEqual([
      { label: 'command', value: 'echo "it\'s done" > out.txt\nrm -rf src', block: true },
      { label: 'cell id', value: 'load', block: false },
      { label: 'lines', value: '3, 4', block: false },
      { label: 'dry run', value: 'false', block: false },
      { label: 'timeout', value: '30', block: false },
      { label: 'where', value: '{\n  "file": "a.py",\n  "line": 2\n}', block: true }
    ]);
    expect(argumentFields({ path: 'x'.repeat(61) })[0]!.block).toBe(true);
  });

  it('gives arguments that are not an object as one field, and none for none', () => {
    expect(argumentFields(['a', 1])).toEqual([{ label: 'arguments', value: 'a, 1', block: false }]);
    expect(argumentFields('text')).toEqual([{ label: 'arguments', value: 'text', block: false }]);
    expect(argumentFields([{ a: 1 }])).toEqual([
      { label: 'arguments', value: '[\n  {\n    "a": 1\n  }\n]', block: true }
    ]);
    expect(argumentFields(undefined)).toEqual([]);
  });
});
