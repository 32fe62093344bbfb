import type { PolicyPort } from '../ports/gate-ports.js';
import { BUILTIN_RULES, type PolicyRule } from './policy.js';
import { loadPolicyRules, type CachedFile } from './policy-file.js';

/**
 * The server's {@link PolicyPort}: the policy files (checked per call; re-read when changed) followed by the
 * "always for this pattern" answers of this server's lifetime (in memory; to keep one,
 * add it to a policy file).
 */
export class PolicyStore implements PolicyPort {
  private readonly session: PolicyRule[] = [];
  /** Parsed policy files, re-read only when their stat changes. */
  private readonly files = new Map<string, CachedFile>();

  constructor(
    private readonly options: {
      workspace: string;
      env?: NodeJS.ProcessEnv;
      onProblem?: (file: string, message: string) => void;
    }
  ) {}

  async rules(): Promise<readonly PolicyRule[]> {
    return [...BUILTIN_RULES, ...(await loadPolicyRules(this.options, this.files)), ...this.session];
  }

  /**
   * One sentence per policy file that is malformed or unreadable as it is now, saying what to
   * fix: such a file contributes no rules, so a deny the person wrote there does not apply.
   */
  async problems(): Promise<string[]> {
    await this.rules();
    return [...this.files].flatMap(([file, cached]) =>
      cached.broken === undefined
        ? []
        : [
            `The policy file ${file} is ignored: ${cached.broken}. None of its rules apply until it is fixed (reads run, writes and commands ask). Expected {"rules": [{"tool": "shell", "pattern": "git status*", "action": "allow"}]}.`
          ]
    );
  }

  remember(rule: PolicyRule): void {
    this.session.push(rule);
  }
}
