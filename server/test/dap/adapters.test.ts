import { chmodSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findExecutable, findMarker } from '../../src/dap/adapters.js';

// DBG-4: a process adapter needs a root marker within the workspace AND an executable.
describe('DBG-4: where a process adapter comes from', () => {
  it('looks for root markers only inside the workspace, never in a sibling whose name the workspace prefixes', () => {
    const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'cm-adapters-')));
    const workspace = path.join(base, 'ws');
    const sibling = path.join(base, 'ws2');
    mkdirSync(workspace);
    mkdirSync(path.join(sibling, 'cmd'), { recursive: true });
    writeFileSync(path.join(base, 'go.mod'), 'module outside\n');
    writeFileSync(path.join(sibling, 'cmd', 'main.go'), 'package main\n');
    expect(findMarker('delve', workspace, path.join(sibling, 'cmd', 'main.go'))).toBeUndefined();
    mkdirSync(path.join(workspace, 'cmd'));
    writeFileSync(path.join(workspace, 'go.mod'), 'module inside\n');
    writeFileSync(path.join(workspace, 'cmd', 'main.go'), 'package main\n');
    expect(findMarker('delve', workspace, path.join(workspace, 'cmd', 'main.go'))).toBe('go.mod');
  });

  it('takes a PATH entry only when it is an executable file, as a shell would', async () => {
    const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'cm-adapters-')));
    const plain = path.join(base, 'plain');
    const folder = path.join(base, 'folder');
    const real = path.join(base, 'real');
    for (const d of [plain, real]) mkdirSync(d);
    mkdirSync(path.join(folder, 'dlv'), { recursive: true });
    writeFileSync(path.join(plain, 'dlv'), '#!/bin/sh\n');
    writeFileSync(path.join(real, 'dlv'), '#!/bin/sh\n');
    chmodSync(path.join(real, 'dlv'), 0o755);
    const env = { PATH: [plain, folder, real].join(path.delimiter) };
    expect(await findExecutable('delve', { workspace: base, env })).toEqual([path.join(real, 'dlv'), 'dap']);
    expect(
      await findExecutable('delve', { workspace: base, env: { PATH: [plain, folder].join(path.delimiter) } })
    ).toBeUndefined();
  });
});
