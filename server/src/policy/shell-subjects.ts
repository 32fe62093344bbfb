/**
 * The policy subjects of a shell command line (HARN-5/6): every simple command that would
 * run — each part of a compound line, and the commands inside `$(…)`, backticks, process
 * substitutions, subshells, `bash -c` / `eval` scripts and `find -exec` — judged on its own
 * with its *resolved* name (`/bin/rm x`, `command rm x`, `env rm x`, `\rm x` and `"rm" x`
 * are all the subject `rm x`), so a rule `git *` does not let `git status; rm -rf data`
 * through and a deny on `shell rm*` cannot be dodged; the strictest decision wins. A line
 * that does not parse is judged as a whole (and the floor asks). A privilege wrapper stays
 * a subject of its own too (`sudo rm x` is both `sudo rm x` and `rm x`). Pure.
 */
import { analyzeShell } from './shell-analysis.js';
import type { SimpleCommand } from './shell-parse.js';

/** The subjects a shell command line is judged on (never empty). */
export function shellSubjects(command: string): string[] {
  const analysis = analyzeShell(command);
  const whole = command.trim();
  const subjects = analysis.commands.flatMap(subjectsOf);
  if (analysis.unparsed) subjects.push(whole);
  return [...new Set(subjects.length > 0 ? subjects : [whole])];
}

function subjectsOf(cmd: SimpleCommand): string[] {
  if (cmd.dynamicName) return [cmd.source.trim()];
  if (!cmd.name) return cmd.via.length > 0 ? [cmd.source.trim()] : [];
  const own = [cmd.name, ...cmd.args.map((a) => (a.literal ? a.value : a.source))].join(' ');
  return cmd.via.some((w) => w === 'sudo' || w === 'doas') ? [own, cmd.source.trim()] : [own];
}
