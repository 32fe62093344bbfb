/** What the model sees of `lsp` (HARN-1): schema + description snapshot, valid examples. */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { createLspRenameTool } from '../../src/tools/lsp_rename/lsp_rename.js';
import { createLspCodeActionTool } from '../../src/tools/lsp_code_action/lsp_code_action.js';
import { ToolRegistry } from '../../src/gate/registry.js';

describe('lsp tools: what the model sees', () => {
  it('lsp, lsp_rename and lsp_code_action schema and description snapshots; examples valid', async () => {
    const service = new LspService({
      workspace: os.tmpdir(),
      env: {},
      logger: silentLogger,
      bundledBins: [],
      tableFiles: []
    });
    const docs = new DocumentSync(service);
    const tools = [createLspTool(service, docs), createLspRenameTool(docs), createLspCodeActionTool(docs)];
    const registry = new ToolRegistry(tools);
    for (const tool of tools) {
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
      for (const word of [/When to use/, /cannot/, /Returns/, /Cost/]) expect(tool.description).toMatch(word);
    }
    await service.dispose();
    registry.dispose();
  });
});
