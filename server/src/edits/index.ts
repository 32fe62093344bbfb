/** The one all-or-nothing multi-file edit and its text-edit helpers; see README.md. */
export {
  applyChanges,
  nodeEditFs,
  type AppliedFile,
  type ApplyOptions,
  type Change,
  type EditFs,
  type NotebookCellsChange,
  type TextFileChange
} from './apply-changes.js';
export { EditError, type EditErrorCode } from './edit-error.js';
export { locateCellSources, spliceCellSources, type CellSourceSplice } from './notebook-splice.js';
export {
  applyLspEdits,
  applyOffsetEdits,
  describeOffset,
  findOverlaps,
  fromLspEdits,
  lineRangeEdit,
  lineStarts,
  offsetAt,
  positionAt,
  type LspPosition,
  type LspTextEdit,
  type OffsetEdit
} from './text-edits.js';
