/** Content-Length framing for LSP and DAP child processes (DBG-6); see README.md. */
export { createFramedReader, DEFAULT_STALL_TIMEOUT_MS, type FramedReaderOptions } from './framed-reader.js';
export { createFramedWriter } from './framed-writer.js';
export { FramingError, type FramingErrorCode } from './framing-error.js';
export { FrameScanner, DEFAULT_MAX_MESSAGE_BYTES, MAX_HEADER_BYTES, type ScanEvent } from './frame-scanner.js';
export { FrameBudget, DEFAULT_FRAME_BUDGET_BYTES, companionBudget, mebibytes, type Overrun } from './frame-budget.js';
