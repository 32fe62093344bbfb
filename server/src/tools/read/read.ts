import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { formatReadResult } from './read-format.js';
import { looksBinary } from '../../workspace/binary.js';

/** Default number of lines per call. */
export const DEFAULT_READ_LIMIT = 2000;
/** Upper bound on characters returned per call (the note says where to continue). */
export const MAX_READ_OUTPUT_CHARS = 50_000;

const positiveInt = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(1, { error: `must be ${what}` });

/** Argument schema of `read` (what the model sees). */
export const readParameters = z.strictObject({
  path: z
    .string({ error: 'must be a string path relative to the workspace' })
    .min(1, { error: 'must not be empty' })
    .describe('File path relative to the workspace root (e.g. "notes.md"), or absolute inside the workspace.'),
  offset: positiveInt('a positive integer (the 1-based line to start at)')
    .optional()
    .describe('1-based line number to start at. Default 1.'),
  limit: positiveInt('a positive integer (how many lines to return)')
    .optional()
    .describe(`Maximum number of lines to return. Default ${DEFAULT_READ_LIMIT}.`)
});

/** `read`: a window of a workspace text file, numbered, with explicit truncation notes. */
export const readTool = defineTool({
  name: 'read',
  tier: 'read',
  description: TOOL_DESCRIPTIONS.read,
  parameters: readParameters,
  examples: [
    { args: { path: 'README.md' }, comment: 'read a whole (short) file' },
    { args: { path: 'src/model.py', offset: 201, limit: 200 }, comment: 'continue a long file at line 201' }
  ],
  timeoutMs: 30_000,
  // read pages itself (offset/limit, explicit note); shaping it would point at a copy.
  outputShaping: 'paged',
  paths: (args) => [args.path],
  async execute(args, ctx) {
    const resolved = await resolveWorkspacePath(ctx.workspace, args.path);
    const shown = resolved.relative;
    if (!resolved.exists) {
      throw new ToolInputError(
        `File not found: "${args.path}" (workspace ${ctx.workspace}). Check the path; paths are relative to the workspace root.`
      );
    }
    const info = await stat(resolved.absolute);
    if (info.isDirectory()) {
      throw new ToolInputError(
        `"${args.path}" is a directory; read only reads files. Call read with the path of a file inside it, e.g. "${shown === '.' ? '' : `${shown}/`}README.md".`
      );
    }
    if (!info.isFile())
      throw new ToolInputError(`"${args.path}" is not a regular file (a device, socket or pipe); read refuses it.`);
    if (await fileLooksBinary(resolved.absolute)) {
      throw new ToolInputError(
        `"${args.path}" looks like a binary file (${info.size} bytes); read only returns text. Do not retry on this file.`
      );
    }
    const offset = args.offset ?? 1;
    const limit = args.limit ?? DEFAULT_READ_LIMIT;
    const { window, total } = await readWindow(resolved.absolute, offset, limit, ctx.signal);
    if (total > 0 && offset > total) {
      throw new ToolInputError(
        `offset ${offset} is past the end of "${shown}" (${total} lines). Call read with an offset between 1 and ${total}.`
      );
    }
    const result = formatReadResult({ path: shown, lines: window, offset, total, maxChars: MAX_READ_OUTPUT_CHARS });
    return { title: result.title, output: result.output, metadata: { path: shown, total, shown: result.shownLines } };
  }
});

async function fileLooksBinary(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(8192);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return looksBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Streams the file once: keeps lines [offset, offset+limit) and counts all lines. */
async function readWindow(
  file: string,
  offset: number,
  limit: number,
  signal: AbortSignal
): Promise<{ window: string[]; total: number }> {
  const stream = createReadStream(file, { encoding: 'utf8', signal });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const window: string[] = [];
  let total = 0;
  try {
    for await (const line of lines) {
      total += 1;
      if (total >= offset && total < offset + limit) window.push(line);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return { window, total };
}
