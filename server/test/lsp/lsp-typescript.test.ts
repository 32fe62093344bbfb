/**
 * The `lsp` tool on real typescript-language-server (v5, over the TypeScript that Cellmate
 * ships) on the TS fixture (SPEC LSP-2/3/4): definition across files, references,
 * implementation, hover, workspace symbols, and the missing-import quick fix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lspFixture, type LspFixture } from './lsp-fixtures.js';

let f: LspFixture;
beforeAll(async () => {
  f = await lspFixture(['ts'], { flat: true });
}, 60_000);
afterAll(() => f?.dispose());

describe('lsp on typescript-language-server (TS fixture)', () => {
  it('definition across files and #2 on a line with two calls', async () => {
    const r = await f.call('lsp', { action: 'definition', file: 'src/main.ts', line: 3, symbol: 'greet#2' });
    expect(r.output).toContain('src/greet.ts:2  export function greet(name: string): string {');
  }, 60_000);

  it('references count every use (declaration, import, two calls, and the unimported use does not count)', async () => {
    const r = await f.call('lsp', { action: 'references', file: 'src/greet.ts', line: 2, symbol: 'greet' });
    expect(r.output.split('\n')[0]).toMatch(/^4 references of "greet"/);
    expect(r.output.split('\n').filter((l) => l.startsWith('src/main.ts:3 '))).toHaveLength(2);
  }, 60_000);

  it('implementation of an interface method finds the class; hover shows the doc comment', async () => {
    const impl = await f.call('lsp', { action: 'implementation', file: 'src/greet.ts', line: 6, symbol: 'Shape' });
    expect(impl.output).toContain('src/greet.ts:10  export class Square implements Shape {');
    const h = await f.call('lsp', { action: 'hover', file: 'src/main.ts', line: 3, symbol: 'greet' });
    expect(h.output).toContain('greet(name: string): string');
    expect(h.output).toContain('Says hello to someone.');
  }, 60_000);

  it('workspace symbols', async () => {
    const r = await f.call('lsp', { action: 'symbols', file: 'src/main.ts', query: 'Square' });
    expect(r.output).toMatch(/class Square — src\/greet\.ts:10/);
  }, 60_000);

  it('a code action adds the missing import', async () => {
    const d = await f.call('lsp', { action: 'diagnostics', file: 'src/needs-import.ts' });
    expect(d.output).toContain("src/needs-import.ts:1 [error] Cannot find name 'greet'. (2304)");
    const r = await f.call('lsp', { action: 'code_actions', file: 'src/needs-import.ts', line: 1, symbol: 'greet' });
    expect(r.output).toMatch(/Add import from "\.\/greet(\.js)?"/);
  }, 60_000);
});
