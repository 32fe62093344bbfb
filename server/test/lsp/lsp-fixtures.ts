/**
 * Real language servers on fixture projects: copies a fixture (server/test/fixtures/lsp/<name>)
 * into a fresh temporary workspace and builds the LSP service, its document sync and the
 * `lsp` tool around it, with the servers Cellmate ships (the repo's node_modules/.bin).
 */
import { cp, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../src/config/logger.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService, type LspServiceOptions } from '../../src/lsp/lsp-service.js';
import type { NotebookPort } from '../../src/notebooks/pane-hub.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { ToolRegistry, type ToolRegistryOptions } from '../../src/gate/registry.js';
import { WriteDiagnostics, type WriteDiagnosticsOptions } from '../../src/lsp/write-diagnostics.js';
import { applyPatchTool, editTool, writeTool } from '../../src/tools/index.js';
import { createNotebookTools } from '../../src/tools/notebook/notebook.js';
import type { ToolDefinition } from '../../src/gate/define-tool.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repo root. */
export const REPO = path.resolve(here, '..', '..', '..');
/** Where Cellmate's own basedpyright and typescript-language-server live. */
export const BUNDLED_BINS = [path.join(REPO, 'node_modules', '.bin')];

/** A fixture workspace with a live LSP service; dispose() stops the servers. */
export interface LspFixture {
  workspace: string;
  service: LspService;
  docs: DocumentSync;
  registry: ToolRegistry;
  /** Calls a registered tool as the model would; returns the result text (throws on error results). */
  call(
    name: string,
    args: Record<string, unknown>,
    chatId?: string
  ): Promise<{ output: string; display?: unknown; ok: boolean }>;
  dispose(): Promise<void>;
}

/** Copies fixtures into one temporary workspace (each under its own name, or at the top with `flat`). */
export async function lspFixture(
  names: string[],
  options: Partial<LspServiceOptions> & {
    port?: NotebookPort;
    flat?: boolean;
    /** Registers write, edit, apply_patch and the notebook tools with write-time diagnostics. */
    writeTools?: boolean | WriteDiagnosticsOptions;
    extraTools?: (f: { service: LspService; docs: DocumentSync }) => ToolDefinition[];
    /** The policy and the person answering its cards (default: no policy gate). */
    gate?: (workspace: string) => Pick<ToolRegistryOptions, 'policy' | 'approvals'>;
  } = {}
): Promise<LspFixture> {
  // Not helpers/temp's tempDir: a fixture lives for a whole describe block (beforeAll), not one test.
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-lsp-')));
  for (const n of names)
    await cp(path.join(here, '..', 'fixtures', 'lsp', n), options.flat ? workspace : path.join(workspace, n), {
      recursive: true
    });
  // A generous diagnostics wait: tests run beside others on a loaded machine, and a wait returns
  // as soon as the publish arrives (the late path is tested with an explicit wait of 0).
  const service = new LspService({
    workspace,
    env: process.env,
    logger: silentLogger,
    bundledBins: BUNDLED_BINS,
    tableFiles: [],
    diagnosticsWaitMs: 60_000,
    ...options
  });
  const docs = new DocumentSync(service, options.port);
  const writeHook = options.writeTools
    ? new WriteDiagnostics(docs, typeof options.writeTools === 'object' ? options.writeTools : {})
    : undefined;
  const writeTools: ToolDefinition[] = options.writeTools
    ? [
        writeTool,
        editTool,
        applyPatchTool,
        ...createNotebookTools({
          port: options.port ?? { find: async () => undefined }
        })
      ]
    : [];
  const registry = new ToolRegistry(
    [createLspTool(service, docs), ...writeTools, ...(options.extraTools?.({ service, docs }) ?? [])],
    { ...(writeHook ? { writeHook } : {}), ...options.gate?.(workspace) }
  );
  return {
    workspace,
    service,
    docs,
    registry,
    async call(name, args, chatId = 'chat-1') {
      const r = await registry.call(name, args, {
        workspace,
        signal: new AbortController().signal,
        actor: 'model',
        chatId
      });
      return { output: r.output, ok: r.ok, ...(r.ok && r.display ? { display: r.display } : {}) };
    },
    async dispose() {
      writeHook?.dispose();
      await service.dispose();
      await rm(workspace, { recursive: true, force: true });
    }
  };
}
