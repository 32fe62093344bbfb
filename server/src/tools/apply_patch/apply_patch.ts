import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { applyChanges, type EditFs, type TextFileChange } from '../../edits/index.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { unifiedDiff } from '../../edits/unified-diff.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { resolveForWrite } from '../../workspace/file-io.js';
import { applyHunks, parsePatch, PatchError, type FilePatch } from './parse-patch.js';

export const applyPatchParameters = z.strictObject({
  patch: z
    .string({ error: 'must be a string (a unified diff)' })
    .min(1, { error: 'must not be empty' })
    .describe('Unified diff text: "--- a/path", "+++ b/path", then "@@ -l,n +l,n @@" hunks.')
});

function safeParse(patch: string): FilePatch[] {
  try {
    return parsePatch(patch);
  } catch (error) {
    if (error instanceof PatchError)
      throw new ToolInputError(`The patch could not be parsed: ${error.message} Nothing was changed.`);
    throw error;
  }
}

/** Options of {@link createApplyPatchTool}. */
export interface ApplyPatchOptions {
  /** File access for the writes (fault-injection tests); default the real file system. */
  fs?: EditFs;
}

/** `apply_patch`: unified diff, all-or-nothing across files (through `edits/`). */
export const createApplyPatchTool = (options: ApplyPatchOptions = {}) =>
  defineTool({
    name: 'apply_patch',
    tier: 'write',
    description: TOOL_DESCRIPTIONS.apply_patch,
    parameters: applyPatchParameters,
    examples: [
      {
        args: {
          patch: '--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n import os\n-DEBUG = True\n+DEBUG = False\n'
        },
        comment: 'change one line with context'
      }
    ],
    timeoutMs: 60_000,
    actionClasses: ['write-file', 'delete-file'],
    // Every file the patch touches (old and new names); an unparsable patch names none and
    // is refused by execute before anything is written.
    paths: (args) => {
      try {
        return [
          ...new Set(
            parsePatch(args.patch).flatMap((f) => [f.oldPath, f.newPath].filter((p): p is string => p !== null))
          )
        ];
      } catch {
        return [];
      }
    },
    async preview(args, ctx) {
      const plan = await planPatch(args.patch, ctx.workspace);
      return {
        summary: `apply_patch · ${plan.map((p) => p.relative).join(', ')}`,
        files: plan.map((p) => ({ path: p.relative, diff: unifiedDiff(p.original ?? '', p.next ?? '') }))
      };
    },
    async execute(args, ctx) {
      // Plan everything in memory first; write only when every hunk applies.
      const plan = await planPatch(args.patch, ctx.workspace);
      // The one all-or-nothing multi-file edit: every file re-checked against what the hunks
      // were applied to, temp file + rename, rollback if a write fails.
      const changes = plan.map((p): TextFileChange => ({
        kind: 'text',
        path: p.relative,
        expected: p.original,
        next: p.next
      }));
      await applyChanges(changes, {
        workspace: ctx.workspace,
        signal: ctx.signal,
        ...(options.fs ? { fs: options.fs } : {})
      });
      return {
        title: `${plan.length} file${plan.length === 1 ? '' : 's'} patched`,
        output: plan.map((p) => p.summary).join('\n'),
        metadata: { changedFiles: plan.map((p) => p.relative) }
      };
    }
  });

/** `apply_patch` on the real file system. */
export const applyPatchTool = createApplyPatchTool();

/** A file the patch changes: its text before (null: created) and after (null: deleted). */
interface PatchedFile {
  absolute: string;
  relative: string;
  next: string | null;
  original: string | null;
  summary: string;
}

/**
 * Every file's new text, planned in memory (nothing written).
 * @throws ToolInputError when the patch does not apply; nothing may be written then
 */
async function planPatch(patch: string, workspace: string): Promise<PatchedFile[]> {
  const files = safeParse(patch);
  const plan: PatchedFile[] = [];
  for (const f of files) {
    const target = f.newPath ?? f.oldPath!;
    const resolved = await resolveForWrite(workspace, target);
    if (f.oldPath !== null && f.newPath !== null && f.oldPath !== f.newPath) {
      throw new ToolInputError(`${f.oldPath} → ${f.newPath}: renames are not supported. Nothing was changed.`);
    }
    if (plan.some((p) => p.absolute === resolved.absolute))
      throw new ToolInputError(`${target} appears twice in the patch; merge its hunks. Nothing was changed.`);
    const original = resolved.exists ? await readFile(resolved.absolute, 'utf8') : null;
    if (f.oldPath === null && original !== null)
      throw new ToolInputError(
        `${target} already exists, but the patch creates it (--- /dev/null). Nothing was changed.`
      );
    if (f.oldPath !== null && original === null)
      throw new ToolInputError(`${target} does not exist. Nothing was changed.`);
    let next: string | null;
    try {
      next = f.newPath === null ? null : applyHunks(original ?? '', f.hunks, target);
    } catch (error) {
      if (error instanceof PatchError)
        throw new ToolInputError(`${error.message} Nothing was changed (all-or-nothing).`);
      throw error;
    }
    if (f.newPath === null) {
      const expected = f.hunks.flatMap((h) => h.before).join('\n');
      if ((original ?? '').replace(/\n$/, '') !== expected)
        throw new ToolInputError(`${target}: the deletion hunk does not match the whole file. Nothing was changed.`);
    }
    const plus = f.hunks.reduce((n, h) => n + h.added, 0);
    const minus = f.hunks.reduce((n, h) => n + h.removed, 0);
    const summary =
      f.oldPath === null
        ? `A ${resolved.relative} (+${plus})`
        : f.newPath === null
          ? `D ${resolved.relative}`
          : `M ${resolved.relative} (+${plus} −${minus})`;
    plan.push({ absolute: resolved.absolute, relative: resolved.relative, next, original, summary });
  }
  return plan;
}
