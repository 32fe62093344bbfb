import type { PolicyPort } from '../ports/gate-ports.js';
import { BUILTIN_RULES, type PolicyRule } from './policy.js';
import { loadPolicyRules } from './policy-file.js';

/**
 * The server's {@link PolicyPort}: the policy files (checked per call; re-read when changed) followed by the
 * "always for this pattern" answers of this server's lifetime (in memory; to keep one,
 * add it to a policy file).
 */
export class PolicyStore implements PolicyPort {
  private readonly session: PolicyRule[] = [];
  /** Parsed policy files, re-read only when their stat changes. */
  private readonly files = new Map<string, { stamp: string; rules: PolicyRule[] }>();

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

  remember(rule: PolicyRule): void {
    this.session.push(rule);
  }
}
