/**
 * What of a cell's outputs a re-run must reproduce (pure). Two runs of the same code differ
 * in things nobody means by "the output changed": execution counts, object addresses,
 * clock times and durations, temporary paths, progress bars redrawn with `\r`, widget
 * models, ANSI colours, how a stream was split into messages. Those are folded away here;
 * images are compared by perceptual hash elsewhere (`image-hash.ts`), since a re-rendered
 * identical figure rarely has identical bytes.
 */

/** One nbformat output as stored in an `.ipynb` (or built from a kernel's IOPub messages). */
export interface NbOutput {
  output_type: 'stream' | 'display_data' | 'execute_result' | 'error' | 'update_display_data' | string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  execution_count?: number | null;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

/** A normalised output: text to compare as is, or an image to compare by hash. */
export type ComparableOutput =
  | { kind: 'text'; channel: string; text: string }
  | { kind: 'image'; channel: string; mime: string; base64: string }
  | { kind: 'error'; ename: string; evalue: string };

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const ADDRESS = /\b0x[0-9a-fA-F]{6,16}\b/g;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b/g;
const CLOCK = /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g;
const TEMP_PATH =
  /(?:\/tmp|\/var\/tmp|\/private\/var\/folders|\/var\/folders)\/[^\s'"<>),\]]*|[A-Za-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\[^\s'"<>),\]]*/g;
/** `%time`/`%timeit` reports and similar durations: the whole line is timing, not result. */
const TIMING_LINE = /^(?:CPU times:|Wall time:|.*\bper loop\b|.*\bloops? each\)|Elapsed time:|Time taken:).*$/gm;
/** tqdm-style bars (`45%|████▌     | 45/100 [00:01<00:02, 30.1it/s]`). */
const PROGRESS_LINE = /^.*\d+%\|.*\|.*$/gm;
/** MIME types that describe a live widget or an interactive front-end, not a result. */
const IGNORED_MIME = /^application\/vnd\.jupyter\.widget-|^application\/vnd\.holoviews_load|^application\/javascript$/;
/** Preferred representation of a display, best first (one per output, as a front-end shows). */
const IMAGE_MIME = ['image/png', 'image/jpeg'];
const TEXT_MIME = ['text/plain', 'text/markdown', 'text/latex', 'text/html', 'image/svg+xml', 'application/json'];

/** Text of a multiline nbformat field. */
export function joinText(t: string | string[] | undefined): string {
  return Array.isArray(t) ? t.join('') : (t ?? '');
}

/** Applies carriage returns the way a terminal shows them: each line keeps what was drawn last. */
export function applyCarriageReturns(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!line.includes('\r')) return line;
      const parts = line.split('\r').filter((p, i, all) => p !== '' || i === all.length - 1);
      return parts.length ? parts[parts.length - 1]! : '';
    })
    .join('\n');
}

/** Folds the run-to-run noise out of one text (see the module comment). */
export function normaliseText(text: string, extraTempRoots: readonly string[] = []): string {
  let t = applyCarriageReturns(text.replace(ANSI, ''));
  for (const root of extraTempRoots) if (root.length > 1) t = t.split(root).join('<tmp>');
  return t
    .replace(TEMP_PATH, '<tmp>')
    .replace(ADDRESS, '0x…')
    .replace(ISO_TIME, '<time>')
    .replace(CLOCK, '<time>')
    .replace(TIMING_LINE, '<timing>')
    .replace(PROGRESS_LINE, '')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

/**
 * A cell's outputs in comparable form: streams of one name merged (a kernel may split them
 * differently each run), empty streams dropped, each display reduced to its preferred
 * representation, errors to type and message (the traceback holds paths and line numbers
 * of the run).
 */
export function comparableOutputs(
  outputs: readonly NbOutput[],
  extraTempRoots: readonly string[] = []
): ComparableOutput[] {
  const merged: ComparableOutput[] = [];
  let stream: { channel: string; raw: string } | undefined;
  const flush = (): void => {
    if (!stream) return;
    const text = normaliseText(stream.raw, extraTempRoots);
    if (text) merged.push({ kind: 'text', channel: stream.channel, text });
    stream = undefined;
  };
  for (const o of outputs) {
    if (o.output_type === 'stream') {
      const channel = o.name === 'stderr' ? 'stderr' : 'stdout';
      if (stream && stream.channel !== channel) flush();
      stream = stream ?? { channel, raw: '' };
      stream.raw += joinText(o.text);
      continue;
    }
    flush();
    if (o.output_type === 'error') {
      merged.push({
        kind: 'error',
        ename: String(o.ename ?? ''),
        evalue: normaliseText(String(o.evalue ?? ''), extraTempRoots)
      });
      continue;
    }
    const data = o.data ?? {};
    const mimes = Object.keys(data).filter((m) => !IGNORED_MIME.test(m));
    const image = IMAGE_MIME.find((m) => mimes.includes(m));
    if (image) {
      merged.push({
        kind: 'image',
        channel: o.output_type,
        mime: image,
        base64: joinText(data[image] as string | string[]).replace(/\s+/g, '')
      });
      continue;
    }
    const mime = TEXT_MIME.find((m) => mimes.includes(m)) ?? mimes.sort()[0];
    if (!mime) continue;
    const value = data[mime];
    const text =
      typeof value === 'string' || Array.isArray(value) ? joinText(value as string | string[]) : JSON.stringify(value);
    const normal = normaliseText(text, extraTempRoots);
    if (normal)
      merged.push({
        kind: 'text',
        channel: `${o.output_type === 'execute_result' ? 'result' : 'display'}:${mime}`,
        text: normal
      });
  }
  flush();
  return merged;
}
