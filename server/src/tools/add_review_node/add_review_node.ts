import { readFile } from 'node:fs/promises';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { cellRef, findCell, NotebookFormatError, parseNotebook } from '../../notebooks/ipynb.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import {
  ReviewConsensusError,
  reviewNodeParameters,
  type ReviewAnchor,
  type ReviewNodeInput
} from '../../modes/review/review.js';
import { nodeLine, reviewDisplay, reviewerOf } from './review-display.js';
import type { ReviewPort } from '../../modes/review/review-port.js';

/**
 * `add_review_node` (SPEC MODE-4): records one finding of the chat's review — kind,
 * priority P0..P3, confidence, an optional anchor (file lines, or a notebook cell and lines
 * in it) and the body — validated at the call boundary by the registry against
 * `review.ts`'s strict schema. The author is the caller (a worker's id, else `agent`); the
 * finding is `open` until a peer approves it (`approve_review_node`).
 */
export function createAddReviewNodeTool(reviews: ReviewPort): ToolDefinition<typeof reviewNodeParameters> {
  return defineTool({
    name: 'add_review_node',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.add_review_node,
    parameters: reviewNodeParameters,
    examples: [
      {
        args: {
          kind: 'bug',
          priority: 'P1',
          confidence: 0.8,
          anchor: { file: 'src/load.py', lines: [12, 14] },
          body: 'range(len(rows) - 1) skips the last row, so totals are short by one row.'
        },
        comment: 'a bug in a file, with the lines it is on'
      }
    ],
    actionClasses: ['read'],
    parallelSafe: false,
    paths: (a) => [a.anchor?.file],
    async execute(args, ctx) {
      const anchor = args.anchor ? await resolveAnchor(args.anchor, ctx.workspace) : undefined;
      let added;
      try {
        added = reviews.addNode(ctx.chatId, {
          kind: args.kind,
          priority: args.priority,
          confidence: args.confidence,
          body: args.body,
          author: reviewerOf(ctx),
          ...(anchor ? { anchor } : {})
        });
      } catch (error) {
        if (error instanceof ReviewConsensusError) throw new ToolInputError(error.message);
        throw error;
      }
      const { review, node } = added;
      return {
        title: `finding ${node.id}: ${node.priority} ${node.kind}`,
        output: `Recorded finding ${nodeLine(node)}. It is open until a peer (another reviewer or the user, never its author) approves it. This review has ${review.nodes.length} finding${review.nodes.length === 1 ? '' : 's'}; when done, call finalize_review.`,
        metadata: { reviewId: review.id, nodeId: node.id },
        display: reviewDisplay(review, node.id)
      };
    }
  });
}

/** The anchor as recorded: the path made workspace-relative, a notebook cell resolved to index + id. */
async function resolveAnchor(anchor: NonNullable<ReviewNodeInput['anchor']>, workspace: string): Promise<ReviewAnchor> {
  const resolved = await resolveWorkspacePath(workspace, anchor.file);
  const file = resolved.relative;
  const lines = anchor.lines ? { lines: [anchor.lines[0], anchor.lines[1]] as [number, number] } : {};
  const notebook = file.endsWith('.ipynb');
  if (!anchor.cell) {
    return { file, ...lines };
  }
  if (!notebook)
    throw new ToolInputError(
      `anchor.cell is for notebooks: ${file} is not an .ipynb file. Drop "cell" and give the file's lines.`
    );
  if (!resolved.exists)
    throw new ToolInputError(`Notebook not found: "${anchor.file}". Paths are relative to the workspace root.`);
  let nb;
  try {
    nb = parseNotebook(await readFile(resolved.absolute, 'utf8'));
  } catch (error) {
    if (error instanceof NotebookFormatError)
      throw new ToolInputError(
        `${file} is not a readable notebook (${error.message}); anchor the finding to the file without "cell".`
      );
    throw error;
  }
  const index = findCell(nb, anchor.cell);
  if (index < 0)
    throw new ToolInputError(
      `No cell "${anchor.cell}" in ${file} (${nb.cells.length} cells); use an id from notebook_read or "#N".`
    );
  return { file, cell: { index, id: cellRef(nb, index) }, ...lines };
}
