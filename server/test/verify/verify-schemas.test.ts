/** What the model sees of the notebook-verification tools (HARN-1): schemas snapshotted, examples valid. */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { createKernelStateTool } from '../../src/tools/kernel_state/kernel_state.js';
import { createNotebookAcceptOutputsTool } from '../../src/tools/notebook_accept_outputs/notebook_accept_outputs.js';
import { createNotebookVerifyTool } from '../../src/tools/notebook_verify/notebook_verify.js';
import { ToolRegistry } from '../../src/gate/registry.js';

describe('notebook_verify, notebook_accept_outputs, kernel_state schemas (HARN-1)', () => {
  const manager = new KernelManager({ workspace: os.tmpdir() });
  const tools = [
    createNotebookVerifyTool({ kernels: manager }),
    createNotebookAcceptOutputsTool(),
    createKernelStateTool({ kernels: { focused: async () => undefined } })
  ];
  const registry = new ToolRegistry(tools);
  for (const tool of tools) {
    it(tool.name, async () => {
      const declared = {
        name: tool.name,
        tier: tool.tier,
        parameters: registry.inputJsonSchema(tool.name),
        description: registry.modelDescription(tool.name)
      };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(
        `../tools/__schemas__/${tool.name}.json`
      );
      for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
      for (const part of [/When to use/, /cannot/, /Returns/, /Cost/]) expect(tool.description).toMatch(part);
    });
  }
  it('notebook_verify takes notebooks or a folder, not both, not neither', () => {
    const p = tools[0]!.parameters;
    expect(p.safeParse({}).success).toBe(false);
    expect(p.safeParse({ notebooks: ['a.ipynb'], folder: '.' }).success).toBe(false);
    expect(p.safeParse({ notebooks: ['a.py'] }).success).toBe(false);
  });
});
