// Issue #14 item 2: the `mcpServers` files other MCP clients use; bad entries are reported
// with the file, the server and the fix, and skipped (never fatal).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMcpConfig, mcpConfigFiles, type McpConfigError } from '../../src/mcp/config.js';
import { tempDir } from '../helpers/temp.js';

describe('mcp.json (issue #14)', () => {
  it('reads ~/.cellmate (CELLMATE_HOME) then the workspace; a later server of the same name wins; disabled removes', async () => {
    const root = await tempDir();
    const ws = path.join(root, 'ws');
    await mkdir(path.join(ws, '.cellmate'), { recursive: true });
    await mkdir(path.join(root, 'home'), { recursive: true });
    const files = mcpConfigFiles(ws, { CELLMATE_HOME: path.join(root, 'home') });
    expect(files).toEqual([path.join(root, 'home', 'mcp.json'), path.join(ws, '.cellmate', 'mcp.json')]);
    await writeFile(
      files[0]!,
      JSON.stringify({
        mcpServers: {
          a: { command: 'one', args: ['x'], env: { K: 'v' } },
          b: { url: 'https://example.org/mcp', headers: { Authorization: 'Bearer t' } },
          c: { command: 'c' }
        }
      })
    );
    await writeFile(
      files[1]!,
      JSON.stringify({
        mcpServers: { a: { command: 'two', tier: 'read', cwd: 'sub' }, c: { command: 'c', disabled: true } }
      })
    );
    const servers = await loadMcpConfig(files);
    expect(servers).toEqual([
      {
        kind: 'stdio',
        name: 'a',
        command: 'two',
        args: [],
        env: {},
        cwd: path.join(ws, '.cellmate', 'sub'),
        tier: 'read',
        file: files[1]
      },
      {
        kind: 'http',
        name: 'b',
        url: 'https://example.org/mcp',
        headers: { Authorization: 'Bearer t' },
        tier: 'exec',
        file: files[0]
      }
    ]);
  });

  it('reports a broken file, a bad name and an entry that is neither stdio nor http, and keeps the rest', async () => {
    const root = await tempDir();
    const one = path.join(root, 'one.json');
    const two = path.join(root, 'two.json');
    await writeFile(one, '{"mcpServers": [oops');
    await writeFile(
      two,
      JSON.stringify({
        mcpServers: {
          'bad name': { command: 'x' },
          nothing: { args: [] },
          web: { url: 'ftp://x' },
          ok: { command: 'ok' }
        }
      })
    );
    const problems: McpConfigError[] = [];
    const servers = await loadMcpConfig([one, two, path.join(root, 'missing.json')], (e) => problems.push(e));
    expect(servers.map((s) => s.name)).toEqual(['ok']);
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringMatching(new RegExp(`^${one}: .*Expected \\{"mcpServers"`)),
      `${two}: server name "bad name" must be 1–40 letters, digits, "_" or "-" (it prefixes its tools' names).`,
      expect.stringMatching(
        new RegExp(
          `^${two}: server "nothing": command: .*A server has either \\{"command", "args", "env"\\} \\(stdio\\) or \\{"url", "headers"\\}`
        )
      ),
      expect.stringMatching(new RegExp(`^${two}: server "web": url: `))
    ]);
  });
});
