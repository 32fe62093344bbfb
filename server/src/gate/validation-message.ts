import type { z } from 'zod';

/**
 * Turns a zod error into one model-actionable sentence, e.g.
 * `Invalid arguments for read: "offset" must be a positive integer (got -3). Rewrite the
 * arguments and call read again.` Pure.
 */
export function formatValidationError(toolName: string, error: z.ZodError, rawArgs: unknown): string {
  const problems = error.issues.slice(0, 5).map((issue) => describeIssue(issue, rawArgs));
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more problems)` : '';
  return `Invalid arguments for ${toolName}: ${problems.join('; ')}${more}. Rewrite the arguments and call ${toolName} again.`;
}

function describeIssue(issue: z.core.$ZodIssue, rawArgs: unknown): string {
  const where = issue.path.length > 0 ? `"${issue.path.map(String).join('.')}"` : 'the arguments';
  const got = valueAt(rawArgs, issue.path);
  const gotText = got.found ? ` (got ${preview(got.value)})` : '';
  switch (issue.code) {
    case 'invalid_type': {
      // zod's default text starts with "Invalid input"; anything else is the schema's own wording.
      const custom = issue.message.startsWith('Invalid input') ? undefined : lowerFirst(issue.message);
      if (!got.found || got.value === undefined)
        return `${where} is required${custom ? ` and ${custom}` : ` (${issue.expected})`}`;
      return `${where} ${custom ?? `must be ${article(issue.expected)}`}${gotText}`;
    }
    case 'too_small':
    case 'too_big':
    case 'invalid_format':
    case 'invalid_value':
    case 'not_multiple_of':
    case 'custom':
      return `${where} ${lowerFirst(issue.message)}${gotText}`;
    case 'unrecognized_keys':
      return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

function valueAt(root: unknown, pathParts: ReadonlyArray<PropertyKey>): { found: boolean; value?: unknown } {
  let current: unknown = root;
  for (const key of pathParts) {
    if (current === null || typeof current !== 'object' || !(key in current)) return { found: false };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value: current };
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function lowerFirst(text: string): string {
  return text.length > 0 ? text[0]!.toLowerCase() + text.slice(1) : text;
}
