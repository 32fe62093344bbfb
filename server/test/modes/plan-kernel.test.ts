/**
 * Plan's profile reaches a real kernel's `tool()` channel (SPEC MODE-2, issue #16
 * acceptance): a cell running under a Plan turn's context that forces `write` — or a shell
 * magic — is refused with exactly the registry's message, while `read` still works. The
 * eval tool is exec tier and so off Plan's surface: here its execute runs with Plan's
 * profile in the context, the way a call already past the gate would.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { profileOf } from '../../src/modes/profiles.js';
import type { ToolContext } from '../../src/gate/define-tool.js';
import { createEvalTool } from '../../src/tools/eval/eval.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

describe.skipIf(!existsSync(PYTHON))("Plan profile through a real kernel's tool() channel", () => {
  let ws: string;
  let kernels: KernelManager;
  let registry: ToolRegistry;
  const ctx = (chatId: string): ToolContext => ({
    workspace: ws,
    signal: new AbortController().signal,
    actor: 'model',
    chatId,
    turnId: 't',
    profile: profileOf('plan')
  });

  beforeAll(async () => {
    ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-plan-kernel-')));
    await writeFile(path.join(ws, 'notes.md'), 'alpha\n');
    kernels = new KernelManager({
      workspace: ws,
      pythonArgv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
    });
    registry = new ToolRegistry(builtinTools());
    registry.register(createEvalTool({ kernels, registry: () => registry, idleTimeoutMs: 30_000 }));
  }, 60_000);
  afterAll(async () => {
    await kernels?.dispose();
    registry?.dispose();
    if (ws) await rm(ws, { recursive: true, force: true });
  });

  it("a forced write and a shell magic from the cell are refused with the registry's message; read works", async () => {
    const refusal =
      'Refused: write is a write-tier tool and the "plan" surface allows only read tools. It is not available here; do not retry it.';
    // The model forcing eval itself is refused the same way.
    const forcedEval = await registry.call(
      'eval',
      { code: '1', description: 'force a cell in plan mode' },
      ctx('plan-model')
    );
    expect(forcedEval.output).toBe(
      'Refused: eval is an exec-tier tool and the "plan" surface allows only read tools. It is not available here; do not retry it.'
    );
    const direct = await registry.call('write', { path: 'x.txt', content: 'x' }, ctx('plan-direct'));
    expect(direct.output).toBe(refusal);

    const evalTool = registry.get('eval')!;
    const code = [
      'try:',
      '    tool("write", {"path": "x.txt", "content": "x"})',
      'except ToolError as e:',
      '    print("ToolError:", e)',
      'print("read:", tool("read", {"path": "notes.md"}).strip())',
      'try:',
      '    !touch pwned',
      'except Exception as e:',
      '    print("shell:", type(e).__name__, e)'
    ].join('\n');
    const result = await evalTool.execute(
      { code, description: 'force a write from a plan-mode cell', language: 'python', reset: false },
      ctx('plan-kernel')
    );
    expect(result.output).toContain(`ToolError: ${refusal}`);
    expect(result.output).toMatch(/read: 1\talpha/);
    expect(result.output).toContain(
      'Refused: shell is an exec-tier tool and the "plan" surface allows only read tools.'
    );
    expect(existsSync(path.join(ws, 'x.txt'))).toBe(false);
    expect(existsSync(path.join(ws, 'pwned'))).toBe(false);
  }, 90_000);
});
