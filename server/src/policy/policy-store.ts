import type { PolicyPort } from '../tools/harness-ports.js';
import { BUILTIN_RULES, type PolicyRule } from './policy.js';
import { loadPolicyRules } from './policy-file.js';

/**
 * The server's {@link PolicyPort}: the policy files (read per call) followed by the
 * "always for this pattern" answers of this server's lifetime (in memory; to keep one,
 * add it to a policy file).
 */
export class PolicyStore implements PolicyPort {
  private readonly session: PolicyRule[] = [];

  constructor(private readonly options: { workspace: string; env?: NodeJS.ProcessEnv; onProblem?: (file: string, message: string) => void }) {}

  async rules(): Promise<readonly PolicyRule[]> {
    return [...BUILTIN_RULES, ...(await loadPolicyRules(this.options)), ...this.session];
  }

  remember(rule: PolicyRule): void {
    this.session.push(rule);
  }
}
