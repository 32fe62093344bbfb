/**
 * The dangerous-command floor for `shell` (SPEC HARN-6): patterns that always ask the
 * person, even when the policy allows the command. It is a floor, not the only wall:
 * the policy, the tier surface and confinement of the working directory come first.
 * Pure; returns the reason or `undefined`.
 */
const CHECKS: ReadonlyArray<{ re: RegExp; why: string }> = [
  { re: /\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[a-zA-Z]*\s+)*(\/|~|\$HOME|\/\*|\.\.?\/?\s*$)(\s|$|\*)/, why: 'recursive delete of /, ~ or the whole folder' },
  { re: /\brm\s+(-[a-zA-Z]*\s+)*--no-preserve-root\b/, why: 'rm --no-preserve-root' },
  { re: /\bdd\b[^|;&]*\bof=\/dev\//, why: 'dd writing to a device' },
  { re: />\s*\/dev\/(sd|nvme|hd|vd|xvd|mmcblk)/, why: 'redirect onto a block device' },
  { re: /\bmkfs(\.\w+)?\b/, why: 'formats a filesystem' },
  { re: /\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b/, why: 'pipes a download into a shell' },
  { re: /\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(python|perl|ruby|node)\d*\b/, why: 'pipes a download into an interpreter' },
  { re: /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&[^}]*\}\s*;?\s*:/, why: 'fork bomb' },
  { re: /(>|\btee\b[^|;&]*|\bcp\b[^|;&]*|\bmv\b[^|;&]*)\s*(~|\$HOME|\/root|\/home\/[^/\s]+)\/\.ssh\b/, why: 'writes to ~/.ssh' },
  { re: /\.ssh\/authorized_keys\b/, why: 'touches ~/.ssh/authorized_keys' },
  { re: /\bchmod\s+(-[a-zA-Z]*\s+)*-?[a-zA-Z]*R[a-zA-Z]*\s+[0-7]*7{2,}[^/]*\s+\/(\s|$)/, why: 'recursive chmod of /' },
  { re: /\bchown\s+(-[a-zA-Z]*\s+)*-R\b[^;&|]*\s\/(\s|$)/, why: 'recursive chown of /' },
  { re: /\b(shutdown|reboot|halt|poweroff)\b/, why: 'stops the machine' },
  { re: /\bsudo\b/, why: 'runs as root' },
  { re: /\bgit\s+push\b[^;&|]*(--force\b|-f\b|--mirror\b)/, why: 'force push' },
  { re: />\s*\/etc\//, why: 'writes to /etc' },
  { re: /\bhistory\s+-c\b|\bshred\b/, why: 'destroys data irrecoverably' }
];

/** The reason a command needs a person's approval regardless of policy, or `undefined`. */
export function dangerousCommandReason(command: string): string | undefined {
  for (const { re, why } of CHECKS) if (re.test(command)) return why;
  return undefined;
}
