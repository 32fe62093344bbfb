/**
 * Heuristic binary check on a file's first bytes: any NUL byte, or more than 30% control
 * bytes other than tab/newline/carriage return/form feed/escape. Pure.
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12 && byte !== 27) control += 1;
  }
  return control / sample.length > 0.3;
}
