/**
 * What the policy is asked about a `debug` call. Each action has its own subject, so that
 * "Always" on one (`continue`) writes a rule for that action kind only — never a `*` rule
 * that would also allow every later `evaluate` and `attach`:
 *
 * - actions with a path (`file`, `program`, `cwd`) are judged on those canonical paths (the
 *   registry builds them);
 * - `evaluate` on `evaluate <expression>`, `attach` on `attach 127.0.0.1:<port>`, any other
 *   action on its name.
 *
 * Code the debuggee runs — an `evaluate` expression, a breakpoint `condition` — is also
 * judged as `eval` on that code and, when it calls process-spawning, deleting or
 * dynamic-code APIs, as `shell` with the dangerous-command floor (the same analysis as
 * `eval`'s cells): the debugger is not a way around either.
 */
import type { ExtraJudgement } from '../../gate/define-tool.js';
import { shellJudgement } from '../eval/eval.js';

interface DebugCall {
  action: string;
  file?: string | undefined;
  program?: string | undefined;
  cwd?: string | undefined;
  expression?: string | undefined;
  condition?: string | undefined;
  port?: number | undefined;
}

/** The text subjects of a call (none when it names paths: those are its subjects). */
export function debugSubjects(a: DebugCall): string[] {
  if (a.file !== undefined || a.program !== undefined || a.cwd !== undefined) return [];
  if (a.action === 'evaluate') return [`evaluate ${a.expression ?? ''}`];
  if (a.action === 'attach') return [`attach 127.0.0.1:${a.port ?? ''}`];
  return [a.action];
}

/** The code a call makes the debuggee run, judged as `eval` (and `shell`, see the module comment). */
export function debugJudgements(a: DebugCall): ExtraJudgement[] {
  const code = a.action === 'evaluate' ? a.expression : a.action === 'breakpoints' ? a.condition : undefined;
  if (!code) return [];
  return [
    { tool: 'eval', tier: 'exec', subjects: [code], why: `debug ${a.action} runs this code in the debuggee` },
    ...shellJudgement(code, 'python')
  ];
}
