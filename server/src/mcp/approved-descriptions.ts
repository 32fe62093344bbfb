/**
 * The tool-poisoning defence's memory: for each MCP tool a person let run,
 * the hash of the description and input schema they were shown. A tool whose text is new or
 * differs from the approved one always asks again (the registry's floor, via `dangerReason`).
 * Kept per user in `<CELLMATE_HOME>/mcp-approved.json` (written by temp file + rename), keyed
 * by the server's identity (command line or URL) so a different server of the same name
 * starts from nothing.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What was approved for one tool. */
export interface ApprovedDescription {
  hash: string;
  /** The text the person saw (shown next to a changed one). */
  description: string;
}

/** The hash of what a person approves: description and input schema together. */
export function descriptionHash(description: string, inputSchema: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([description, inputSchema]))
    .digest('hex');
}

/** See the module comment. */
export class ApprovedDescriptions {
  private entries: Record<string, ApprovedDescription> | undefined;
  private loading: Promise<void> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly onProblem: (message: string) => void = () => {}
  ) {}

  /** Reads the file once (a missing file is empty; a broken one is reported and replaced). */
  async load(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const parsed: unknown = JSON.parse(await readFile(this.file, 'utf8'));
        this.entries = isEntries(parsed) ? parsed : {};
        if (!isEntries(parsed))
          this.onProblem(`${this.file} is not a map of approved MCP tool descriptions; starting from none`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
          this.onProblem(`could not read ${this.file}: ${(error as Error).message}; starting from none`);
        this.entries = {};
      }
    })();
    await this.loading;
  }

  /** The approved entry for a tool of a server identity, if any (call {@link load} first). */
  get(identity: string, tool: string): ApprovedDescription | undefined {
    return this.entries?.[key(identity, tool)];
  }

  /** Records an approval and saves the file. */
  async approve(identity: string, tool: string, entry: ApprovedDescription): Promise<void> {
    await this.load();
    const k = key(identity, tool);
    if (this.entries![k]?.hash === entry.hash) return;
    this.entries![k] = entry;
    const text = `${JSON.stringify(this.entries, null, 1)}\n`;
    this.writing = this.writing.then(async () => {
      try {
        await mkdir(path.dirname(this.file), { recursive: true });
        const temp = `${this.file}.${process.pid}.tmp`;
        await writeFile(temp, text, { mode: 0o600 });
        await rename(temp, this.file);
      } catch (error) {
        this.onProblem(`could not save ${this.file}: ${(error as Error).message}`);
      }
    });
    await this.writing;
  }
}

function key(identity: string, tool: string): string {
  return `${identity} ${tool}`;
}

function isEntries(value: unknown): value is Record<string, ApprovedDescription> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every(
      (e) =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as ApprovedDescription).hash === 'string' &&
        typeof (e as ApprovedDescription).description === 'string'
    )
  );
}
