/**
 * The policy subjects of a shell command line (HARN-5/6): each simple command of a
 * compound line is judged on its own, so a rule `git *` does not let
 * `git status; rm -rf data` through — `rm -rf data` is a subject too, and the strictest
 * decision wins. Splits on unquoted `;`, `&&`, `||`, `|`, `&` and newlines; a line with
 * command substitution (`$(…)` or backticks) or a subshell is also judged as a whole.
 * Pure and conservative: when in doubt it yields more subjects, never fewer.
 */
export function shellSubjects(command: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === '\\' && quote === '"' && i + 1 < command.length) {
        current += c + command[++i];
        continue;
      }
      if (c === quote) quote = undefined;
      current += c;
      continue;
    }
    if (c === '\\' && i + 1 < command.length) {
      current += c + command[++i];
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      current += c;
      continue;
    }
    if (c === ';' || c === '\n' || c === '&' || c === '|') {
      parts.push(current);
      current = '';
      if ((c === '&' || c === '|') && command[i + 1] === c) i++;
      continue;
    }
    current += c;
  }
  parts.push(current);
  const subjects = parts.map(unwrap).filter(Boolean);
  const whole = command.trim();
  if (/\$\(|`|<\(|>\(/.test(command) || /^\s*[({]/.test(command)) subjects.push(whole);
  return [...new Set(subjects.length > 0 ? subjects : [whole])];
}

/** Drops subshell/group brackets that open or close around a part (unbalanced ones). */
function unwrap(part: string): string {
  let p = part.trim().replace(/^[({]\s*/, '');
  const count = (re: RegExp): number => (p.match(re) ?? []).length;
  while (/[)}]$/.test(p) && count(/[)}]/g) > count(/[({]/g)) p = p.slice(0, -1).trim();
  return p;
}
