import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CustomCommands, expandTemplate } from '../../src/commands/custom-commands.js';
import { tempDir } from '../helpers/temp.js';

describe('custom slash commands', () => {
  it('reads .cellmate/commands and ~/.cellmate/commands (home wins), expands $ARGUMENTS, skips bad names', async () => {
    const ws = await tempDir();
    const home = await tempDir('cellmate-home-');
    await mkdir(path.join(ws, '.cellmate', 'commands'), { recursive: true });
    await mkdir(path.join(home, 'commands'), { recursive: true });
    await writeFile(
      path.join(ws, '.cellmate', 'commands', 'explain-df.md'),
      '---\ndescription: Explain a DataFrame\n---\nDescribe the DataFrame $ARGUMENTS: shape, dtypes, nulls.\n'
    );
    await writeFile(path.join(ws, '.cellmate', 'commands', 'tidy.md'), '# Tidy the notebook\nRemove unused imports.\n');
    await writeFile(path.join(ws, '.cellmate', 'commands', 'Bad Name.md'), 'x');
    await writeFile(path.join(ws, '.cellmate', 'commands', 'mine.md'), 'WORKSPACE VERSION');
    await writeFile(path.join(home, 'commands', 'mine.md'), 'HOME VERSION $ARGUMENTS');
    const commands = new CustomCommands({ workspace: ws, env: { CELLMATE_HOME: home } });
    expect(commands.list().map(({ name, description, source }) => [name, description, source])).toEqual([
      ['explain-df', 'Explain a DataFrame', 'workspace'],
      ['mine', 'HOME VERSION $ARGUMENTS', 'home'],
      ['tidy', 'Tidy the notebook', 'workspace']
    ]);
    expect(commands.expand('explain-df', 'sales')).toBe('Describe the DataFrame sales: shape, dtypes, nulls.');
    expect(commands.expand('tidy', 'keep pandas')).toBe('# Tidy the notebook\nRemove unused imports.\n\nkeep pandas');
    expect(commands.expand('mine', 'x')).toBe('HOME VERSION x');
    expect(() => commands.expand('nope', '')).toThrow(RangeError);
    expect(expandTemplate('a $ARGUMENTS b $ARGUMENTS', ' z ')).toBe('a z b z');
  });
});
