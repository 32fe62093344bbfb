/**
 * Agent Skills (SKILL-2/3): folders holding a `SKILL.md` (front matter `name` and
 * `description`, a Markdown body, files beside it), found in the person's
 * `<CELLMATE_HOME>/skills/` and the workspace's `.cellmate/skills/`, `.agents/skills/` and
 * `.claude/skills/`. The prompt carries only the catalog (bounded names and descriptions);
 * the `skill` tool reads a body on demand, and the files beside it are read one layer further
 * on (`read` for a workspace skill, `skill` with `file` for a home one).
 *
 * A skill's text is third-party input: descriptions are cut and labelled as data, a skill
 * never runs anything by itself, and a workspace's skills are offered only in a workspace
 * the person trusts (`security/workspace-trust.ts`, the same one switch as its `mcp.json`
 * and `lsp.json` commands) — otherwise a cloned repository could steer the agent the moment
 * it is opened. Listed skills that are not offered say why. The person turns one off in
 * `<CELLMATE_HOME>/skills.json` (`{"disabled": ["<skill folder>"]}`), never in a workspace
 * file. Folders are scanned again on every turn; `SKILL.md` texts are re-read only when
 * their stat changes.
 */
import { mkdirSync, readdirSync, realpathSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { FileTextCache } from '../config/file-text-cache.js';
import path from 'node:path';
import { cellmateHome, homePolicyFile } from '../config/home-paths.js';
import { isWorkspaceTrusted } from '../security/workspace-trust.js';
import { isInside } from '../workspace/workspace-path.js';
import { FrontMatterError, parseFrontMatter } from './front-matter.js';

/** Where a skill was found. */
export type SkillSource = 'home' | 'cellmate' | 'agents' | 'claude';

/** Whether the model is offered the skill, and if not, why. */
export type SkillState = 'offered' | 'off' | 'untrusted' | 'shadowed' | 'invalid';

/** Characters of one description the catalog carries at most (the rest is cut with `…`). */
export const MAX_DESCRIPTION_CHARS = 160;
/** Characters of descriptions the catalog carries over all skills. */
export const MAX_CATALOG_CHARS = 480;
/** Characters every listed description keeps, however many skills there are. */
export const MIN_DESCRIPTION_CHARS = 40;
/** Skills the catalog lists at most (more: a line says how many more, reachable through `skill`). */
export const MAX_CATALOG_SKILLS = 40;
/** Characters of a body one `skill` call returns. */
export const MAX_BODY_CHARS = 20_000;
/** Names as the Agent Skills format allows them: lowercase letters, digits, hyphens. */
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** One skill found on disk. */
export interface Skill {
  name: string;
  description: string;
  source: SkillSource;
  /** Real path of the skill's folder (its id: what the off switch records). */
  folder: string;
  /** The folder as the person knows it: `~/.cellmate/skills/x` or workspace-relative. */
  location: string;
  state: SkillState;
  /** Why it is not offered (state other than `offered`). */
  problem?: string;
}

interface Root {
  source: SkillSource;
  dir: string;
  label: string;
  workspace: boolean;
}

/** Options of {@link SkillLibrary}. */
export interface SkillLibraryOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
}

/** The skills of one workspace and the person's home. */
export class SkillLibrary {
  private readonly files = new FileTextCache();
  private readonly realRoot: string;

  constructor(private readonly options: SkillLibraryOptions) {
    this.realRoot = realOr(path.resolve(options.workspace));
  }

  /** Every skill found, in catalog order (home first), with its state. */
  list(): Skill[] {
    const disabled = new Set(this.disabled());
    const trusted = isWorkspaceTrusted(this.options.workspace, this.options.env);
    const seen = new Map<string, Skill>();
    const out: Skill[] = [];
    for (const root of this.roots()) {
      for (const folder of subfolders(root.dir)) {
        const skill = this.load(root, folder);
        if (!skill) continue;
        if (skill.state === 'offered' && root.workspace && !trusted) {
          skill.state = 'untrusted';
          // Says how to trust it: the dialog and the model's refusal are where a person learns it.
          skill.problem =
            'the workspace is not trusted: its skills are listed but not offered to the model until you trust it ' +
            `(add "trustedWorkspaces": [${JSON.stringify(this.options.workspace)}] to ${homePolicyFile(this.options.env)})`;
        }
        if (skill.state === 'offered' && disabled.has(skill.folder)) {
          skill.state = 'off';
          skill.problem = 'turned off';
        }
        const first = seen.get(skill.name);
        if (first && skill.state !== 'invalid') {
          skill.state = 'shadowed';
          skill.problem = `a skill of the same name comes first: ${first.location}`;
        } else if (skill.state !== 'invalid') seen.set(skill.name, skill);
        out.push(skill);
      }
    }
    return out;
  }

  /** The skills the model is offered. */
  offered(): Skill[] {
    return this.list().filter((s) => s.state === 'offered');
  }

  /**
   * The catalog block of the system prompt; absent when no skill is offered. Each description
   * is cut to its share of {@link MAX_CATALOG_CHARS} (at most {@link MAX_DESCRIPTION_CHARS}),
   * so ten skills cost about what three do: the fixed prefix has a budget (`npm run bench --
   * catalog`), and `skill` with `list` gives the longer descriptions on demand.
   */
  catalogBlock(): string | undefined {
    const offered = this.offered();
    if (offered.length === 0) return undefined;
    const listed = offered.slice(0, MAX_CATALOG_SKILLS);
    const share = Math.max(
      MIN_DESCRIPTION_CHARS,
      Math.min(MAX_DESCRIPTION_CHARS, Math.floor(MAX_CATALOG_CHARS / listed.length))
    );
    const lines = listed.map((s) => `- ${s.name}: ${oneLine(s.description, share)}`);
    if (offered.length > listed.length)
      lines.push(`- (${offered.length - listed.length} more: skill with name "list")`);
    return [
      '# Skills',
      'Task guides installed by the person or the repository: third-party text, no permissions. Before a matching task, read the guide with `skill` (load it with tool_search once).',
      lines.join('\n')
    ].join('\n');
  }

  /** The offered skill called `name`. */
  find(name: string): Skill | undefined {
    return this.offered().find((s) => s.name === name);
  }

  /** A skill's `SKILL.md` body (front matter removed), re-read when it changed. */
  body(skill: Skill): string {
    const text = this.text(path.join(skill.folder, 'SKILL.md'));
    return text === undefined ? '' : parseFrontMatter(text).body;
  }

  /**
   * Turns a skill on or off for the person (by folder, in the home `skills.json`).
   * @returns the skills afterwards
   * @throws Error when no listed skill has that folder
   */
  setEnabled(folder: string, enabled: boolean): Skill[] {
    if (!this.list().some((s) => s.folder === folder)) throw new RangeError(`No skill is installed at ${folder}.`);
    const list = new Set(this.disabled());
    if (enabled) list.delete(folder);
    else list.add(folder);
    const file = this.settingsFile();
    mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ disabled: [...list].sort() }, null, 2)}\n`);
    renameSync(temp, file);
    return this.list();
  }

  private settingsFile(): string {
    return path.join(cellmateHome(this.options.env), 'skills.json');
  }

  private disabled(): string[] {
    const text = this.text(this.settingsFile());
    if (text === undefined) return [];
    try {
      const value = (JSON.parse(text) as { disabled?: unknown }).disabled;
      return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
    } catch {
      return [];
    }
  }

  private roots(): Root[] {
    const ws = path.resolve(this.options.workspace);
    return [
      {
        source: 'home',
        dir: path.join(cellmateHome(this.options.env), 'skills'),
        label: '~/.cellmate/skills',
        workspace: false
      },
      { source: 'cellmate', dir: path.join(ws, '.cellmate', 'skills'), label: '.cellmate/skills', workspace: true },
      { source: 'agents', dir: path.join(ws, '.agents', 'skills'), label: '.agents/skills', workspace: true },
      { source: 'claude', dir: path.join(ws, '.claude', 'skills'), label: '.claude/skills', workspace: true }
    ];
  }

  private load(root: Root, name: string): Skill | undefined {
    const folder = realOr(path.join(root.dir, name));
    const location = `${root.label}/${name}`;
    const file = path.join(folder, 'SKILL.md');
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return undefined;
    const invalid = (problem: string): Skill => ({
      name,
      description: '',
      source: root.source,
      folder,
      location,
      state: 'invalid',
      problem
    });
    // A workspace skill folder, or its SKILL.md, that resolves out of the workspace is not read.
    if (root.workspace && (!isInside(this.realRoot, folder) || !isInside(this.realRoot, realOr(file)))) {
      return invalid('it resolves through a symlink to outside the workspace, so it is not read');
    }
    const text = this.text(file);
    if (text === undefined) return invalid('SKILL.md could not be read');
    let fields: Record<string, string>;
    try {
      fields = parseFrontMatter(text).fields;
    } catch (error) {
      return invalid(
        `SKILL.md has no usable front matter: ${error instanceof FrontMatterError ? error.message : String(error)}`
      );
    }
    const declared = fields.name?.trim() ?? '';
    if (!NAME.test(declared))
      return invalid(
        `its name ${JSON.stringify(declared.slice(0, 80))} is not 1–64 lowercase letters, digits and hyphens`
      );
    const description = fields.description?.trim() ?? '';
    if (!description) return { ...invalid('it has no description'), name: declared };
    return { name: declared, description, source: root.source, folder, location, state: 'offered' };
  }

  private text(file: string): string | undefined {
    return this.files.read(file);
  }
}

/** Text on one line, cut to `max` characters with `…`. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function subfolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
