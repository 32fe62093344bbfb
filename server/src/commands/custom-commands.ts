/**
 * Custom slash commands: prompt templates in `<workspace>/.cellmate/commands/<name>.md` and
 * `<CELLMATE_HOME>/commands/<name>.md`, the way Claude Code and opencode keep them. `/name
 * words…` in the composer sends the template with `$ARGUMENTS` replaced by the words (or,
 * when the template has no `$ARGUMENTS`, the words on a last line). An optional front matter
 * `description:` is what completion shows; else the template's first line.
 *
 * A template becomes the person's own message, sent by the person, so it is never more than
 * text: it reaches the model as a user message and passes every gate as such. The person's
 * home command wins over a workspace one of the same name. Files are bounded and re-read
 * when they change.
 */
import { readdirSync } from 'node:fs';
import { FileTextCache } from '../config/file-text-cache.js';
import path from 'node:path';
import { cellmateHome } from '../config/home-paths.js';
import { parseFrontMatter } from '../skills/front-matter.js';

/** Characters of a template read at most. */
export const MAX_TEMPLATE_CHARS = 20_000;
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** One custom command. */
export interface CustomCommand {
  name: string;
  description: string;
  source: 'home' | 'workspace';
  template: string;
}

/** The custom commands of a workspace and the person's home. */
export class CustomCommands {
  private readonly files = new FileTextCache();

  constructor(private readonly options: { workspace: string; env: NodeJS.ProcessEnv }) {}

  /** Every command, home first; a name appears once (home wins). */
  list(): CustomCommand[] {
    const out = new Map<string, CustomCommand>();
    const roots: Array<[CustomCommand['source'], string]> = [
      ['home', path.join(cellmateHome(this.options.env), 'commands')],
      ['workspace', path.join(path.resolve(this.options.workspace), '.cellmate', 'commands')]
    ];
    for (const [source, dir] of roots) {
      for (const file of mdFiles(dir)) {
        const name = file.slice(0, -3).toLowerCase();
        if (!NAME.test(name) || out.has(name)) continue;
        const text = this.text(path.join(dir, file));
        if (text === undefined) continue;
        const { description, template } = splitTemplate(text.slice(0, MAX_TEMPLATE_CHARS));
        out.set(name, { name, description, source, template });
      }
    }
    return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * The message `/name args` sends.
   * @throws RangeError when no command has that name
   */
  expand(name: string, args: string): string {
    const command = this.list().find((c) => c.name === name.toLowerCase());
    if (!command)
      throw new RangeError(
        `There is no command /${name}. Custom commands are .md files in .cellmate/commands/ or ~/.cellmate/commands/.`
      );
    return expandTemplate(command.template, args);
  }

  private text(file: string): string | undefined {
    return this.files.read(file);
  }
}

/** `$ARGUMENTS` replaced by `args`; without the placeholder, `args` on a last line. Pure. */
export function expandTemplate(template: string, args: string): string {
  const trimmed = args.trim();
  if (template.includes('$ARGUMENTS')) return template.split('$ARGUMENTS').join(trimmed).trim();
  return trimmed ? `${template.trim()}\n\n${trimmed}` : template.trim();
}

function splitTemplate(text: string): { description: string; template: string } {
  let template = text;
  let description = '';
  if (text.startsWith('---')) {
    try {
      const parsed = parseFrontMatter(text);
      template = parsed.body;
      description = parsed.fields.description ?? '';
    } catch {
      template = text;
    }
  }
  if (!description)
    description =
      template
        .split('\n')
        .find((l) => l.trim())
        ?.replace(/^#+\s*/, '') ?? '';
  return { description: description.replace(/\s+/g, ' ').trim().slice(0, 120), template };
}

function mdFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.md'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}
