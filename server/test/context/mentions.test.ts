/** Issue #5: which `@` mentions a message has, and file mentions expanded for the model. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextService, findMentions } from '../../src/context/context-service.js';
import { tempDir } from '../helpers/temp.js';

describe('mentions (issue #5)', () => {
  it('finds names and paths, not e-mail addresses', () => {
    expect(findMentions('look at @df and @data/x.csv, mail me at a@b.c')).toEqual(['df', 'data/x.csv']);
  });

  it('a file mention becomes a compact head block; the transcript note names it; completion lists files', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'big.csv'), Array.from({ length: 100 }, (_, i) => `${i},${i * 2}`).join('\n'));
    const svc = new ContextService({ workspace: ws });
    const r = await svc.expand('c', 'summarise @big.csv please', undefined);
    expect(r?.modelText).toContain('@big.csv: file');
    expect(r?.modelText).toContain('19,38');
    expect(r?.modelText).not.toContain('50,100');
    expect(r?.note).toBe('Context attached: @big.csv');
    expect(await svc.expand('c', 'no mentions here', undefined)).toBeUndefined();
    expect((await svc.complete(undefined, 'bi')).map((c) => c.name)).toEqual(['big.csv']);
  });
});
