// Issue #9 (start-up): the companion answers its first request without loading the heavy
// packages a turn, a private kernel or a structural query needs later. Each of them is
// imported where it is first used (ARCHITECTURE.md "Direction"); a top-level import of one
// of them turns this red.
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../../dist/main.js');
const hook = path.join(here, 'fixtures', 'record-packages.mjs');

/** Loaded on first use only: none of these may be in the graph that answers `cellmate/hello`. */
const LAZY = [
  'ai',
  '@ai-sdk/anthropic',
  '@ai-sdk/openai',
  '@ai-sdk/openai-compatible',
  '@ast-grep/napi',
  'zeromq',
  'web-tree-sitter',
  'diff',
  'ignore',
  '@jupyterlab/services',
  '@modelcontextprotocol/sdk',
  'ajv',
  'ajv-formats'
];

function frame(body: unknown): string {
  const text = JSON.stringify(body);
  return `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

describe('companion start-up (issue #9)', () => {
  it('answers cellmate/hello without loading the AI SDK, ast-grep, zeromq, tree-sitter, Jupyter services or the MCP SDK', async () => {
    const dir = await tempDir();
    const socket = path.join(dir, 's.sock');
    // A configured MCP server is not started (nor its SDK loaded) before a search or call needs it.
    await mkdir(path.join(dir, '.cellmate'));
    await writeFile(
      path.join(dir, '.cellmate', 'mcp.json'),
      JSON.stringify({ mcpServers: { never: { command: 'false' }, web: { url: 'http://127.0.0.1:9/mcp' } } })
    );
    const child = spawn(process.execPath, ['--import', hook, serverMain, '--socket', socket, '--workspace', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CELLMATE_CONFIG: path.join(dir, 'none.json') }
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('CELLMATE_READY')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`companion exited (${code}) before ready: ${stderr}`)));
      });
      const reply = await new Promise<string>((resolve, reject) => {
        const c = net.connect(socket);
        let got = '';
        c.on('connect', () =>
          c.write(frame({ jsonrpc: '2.0', id: 1, method: 'cellmate/hello', params: { protocolVersion: 1 } }))
        );
        c.on('data', (d) => {
          got += d.toString();
          const m = /Content-Length: (\d+)\r\n\r\n/.exec(got);
          if (m && Buffer.byteLength(got) >= m.index + m[0].length + Number(m[1])) {
            c.end();
            resolve(got.slice(m.index + m[0].length));
          }
        });
        c.on('error', reject);
      });
      expect(JSON.parse(reply)).toMatchObject({ id: 1, result: expect.any(Object) });
      const loaded = [...stderr.matchAll(/^PKG (\S+)$/gm)].map((m) => m[1]);
      expect(loaded).toContain('vscode-jsonrpc'); // the hook works
      expect(loaded.filter((p) => LAZY.includes(p!))).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
