/**
 * The dangerous-command rules on one resolved simple command (SPEC HARN-6): what it does,
 * judged on its resolved name and its words as bash would pass them (see `shell-parse.ts`).
 * Each rule returns a reason a person must approve, whatever the policy says. Pure.
 */
import type { ShellWord, SimpleCommand } from './shell-parse.js';

/** Shells: their script comes from `-c`, a file, or standard input. */
export const SHELLS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'ash',
  'fish',
  'csh',
  'tcsh',
  'yash',
  'rbash',
  'busybox'
]);

const ROOT_DIRS = new Set([
  'etc',
  'usr',
  'bin',
  'sbin',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'boot',
  'dev',
  'proc',
  'sys',
  'var',
  'opt',
  'root',
  'srv',
  'snap',
  'run'
]);
const WRITE_PROTECTED_ROOT = new Set([
  'etc',
  'boot',
  'usr',
  'bin',
  'sbin',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'sys',
  'proc',
  'root'
]);
const HOME_PROTECTED = new Set([
  '.ssh',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.gnupg',
  '.aws',
  '.kube',
  '.docker',
  '.netrc',
  '.gitconfig',
  '.npmrc',
  '.pypirc',
  '.config'
]);
const HARMLESS_DEVICES = /^\/dev\/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|fd\/\d+|shm(\/.*)?|pts\/\d+)$/;
const BLOCK_DEVICE = /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk\/|mapper\/|loop|md|dm-|sr)/;
const PRIVILEGE = new Set(['sudo', 'doas', 'su', 'pkexec', 'run0']);

/** Every reason this one command needs a person (empty: none). */
export function commandDangers(cmd: SimpleCommand): string[] {
  const out: string[] = [];
  const privileged = cmd.via.find((w) => PRIVILEGE.has(w)) ?? (PRIVILEGE.has(cmd.name) ? cmd.name : undefined);
  if (privileged) out.push(`runs as root (${privileged})`);
  for (const r of cmd.redirects) out.push(...redirectDangers(r.op, r.target));
  const rule = RULES[cmd.name];
  if (rule) out.push(...rule(cmd));
  if (/^mkfs(\.\w+)?$|^(mke2fs|mkswap|wipefs|fdisk|sfdisk|cfdisk|sgdisk|parted|blkdiscard)$/.test(cmd.name))
    out.push(`${cmd.name} formats or repartitions a disk`);
  if (/^(shutdown|reboot|halt|poweroff)$/.test(cmd.name)) out.push('stops the machine');
  if (/^(shred|srm|wipe)$/.test(cmd.name)) out.push(`${cmd.name} destroys data irrecoverably`);
  if (cmd.args.some((a) => /\.ssh\/authorized_keys\b/.test(a.value))) out.push('touches ~/.ssh/authorized_keys');
  // The companion's own environment holds the provider keys children never get.
  const words = [...cmd.args, ...cmd.redirects.map((r) => r.target)];
  if (words.some((a) => /^\/proc\/[^/]+\/environ$/.test(a.literal ? a.value : a.source.replace(/["']/g, ''))))
    out.push("reads a process's environment (where secrets live)");
  return out;
}

type Rule = (cmd: SimpleCommand) => string[];

const RULES: Record<string, Rule> = {
  rm: (cmd) => {
    const { flags, operands } = splitOptions(cmd.args);
    const out: string[] = [];
    if (flags.has('--no-preserve-root')) out.push('rm --no-preserve-root');
    const recursive = flags.has('r') || flags.has('R') || flags.has('--recursive');
    if (recursive && cmd.argsFromInput) out.push('recursive delete of paths read from input');
    for (const t of operands) {
      const critical = recursive ? criticalTarget(t) : undefined;
      if (critical) out.push(`recursive delete of ${critical}`);
      else if (writeProtected(t)) out.push(`deletes ${t.value}`);
    }
    return out;
  },
  rmdir: (cmd) => cmd.args.filter(writeProtected).map((t) => `deletes ${t.value}`),
  unlink: (cmd) => cmd.args.filter(writeProtected).map((t) => `deletes ${t.value}`),
  chmod: (cmd) => permissionChange(cmd),
  chown: (cmd) => permissionChange(cmd),
  chgrp: (cmd) => permissionChange(cmd),
  mv: (cmd) => {
    const { operands } = splitOptions(cmd.args);
    const out = operands
      .slice(0, -1)
      .map(criticalTarget)
      .filter(Boolean)
      .map((t) => `moves ${t}`);
    return [...out, ...destination(cmd)];
  },
  cp: destination,
  install: destination,
  ln: destination,
  rsync: (cmd) => [
    ...destination(cmd),
    ...(cmd.args.some((a) => a.value.startsWith('--delete')) ? rsyncDelete(cmd) : [])
  ],
  tee: (cmd) => writes(splitOptions(cmd.args).operands),
  touch: (cmd) => writes(splitOptions(cmd.args).operands),
  truncate: () => ['truncate destroys file contents'],
  sed: (cmd) =>
    cmd.args.some((a) => /^(-[a-zA-Z]*i|--in-place)/.test(a.value)) ? writes(splitOptions(cmd.args).operands) : [],
  dd: (cmd) =>
    cmd.args
      .filter((a) => a.value.startsWith('of='))
      .flatMap((a) => {
        const target = { ...a, value: a.value.slice(3), source: a.source.replace(/^of=/, '') };
        if (target.value.startsWith('/dev/') && !HARMLESS_DEVICES.test(target.value))
          return [`dd writing to the device ${target.value}`];
        return writeProtected(target) ? [`dd writing to ${target.value}`] : [];
      }),
  curl: (cmd) => writes(optionValues(cmd.args, ['-o', '--output'])),
  wget: (cmd) => writes(optionValues(cmd.args, ['-O', '--output-document'])),
  git: gitDangers,
  crontab: (cmd) => {
    const { flags } = splitOptions(cmd.args);
    if (flags.has('r')) return ['crontab -r removes every scheduled job'];
    return flags.has('l') ? [] : ['crontab installs scheduled jobs that run later'];
  },
  history: (cmd) => (cmd.args.some((a) => a.value === '-c') ? ['history -c erases the shell history'] : []),
  init: (cmd) => (cmd.args.some((a) => /^[06]$/.test(a.value)) ? ['stops the machine'] : []),
  telinit: (cmd) => (cmd.args.some((a) => /^[06]$/.test(a.value)) ? ['stops the machine'] : []),
  systemctl: (cmd) =>
    cmd.args.some((a) => /^(poweroff|reboot|halt|kexec|suspend|hibernate)$/.test(a.value)) ? ['stops the machine'] : [],
  kill: (cmd) => {
    const rest = cmd.args.map((a) => a.value);
    let i = 0;
    if (rest[0] === '-s' || rest[0] === '-n') i = 2;
    else if (rest[0]?.startsWith('-') && rest[0] !== '--' && rest.length > 1) i = 1;
    return rest.slice(i).some((v) => v === '-1') ? ['kill -1 signals every process you own'] : [];
  },
  nc: netShell,
  ncat: netShell,
  netcat: netShell,
  socat: (cmd) =>
    cmd.args.some((a) => /(^|,|:)(exec|system):/i.test(a.value))
      ? ['socat hands a program to a network connection']
      : []
};

function netShell(cmd: SimpleCommand): string[] {
  return cmd.args.some((a) => /^-[a-zA-Z]*[ec]$/.test(a.value) || a.value === '--exec' || a.value === '--sh-exec')
    ? [`${cmd.name} hands a program to a network connection`]
    : [];
}

function permissionChange(cmd: SimpleCommand): string[] {
  const { flags, operands } = splitOptions(cmd.args);
  const recursive = flags.has('R') || flags.has('--recursive');
  const out: string[] = [];
  for (const t of operands.slice(1)) {
    const critical = recursive ? criticalTarget(t) : undefined;
    if (critical) out.push(`recursive ${cmd.name} of ${critical}`);
    else if (writeProtected(t)) out.push(`${cmd.name} of ${t.value}`);
  }
  return out;
}

function destination(cmd: SimpleCommand): string[] {
  const { operands } = splitOptions(cmd.args);
  const targets = [...optionValues(cmd.args, ['-t', '--target-directory']), ...operands.slice(-1)];
  return writes(operands.length > 1 || targets.length > operands.slice(-1).length ? targets : []);
}

function rsyncDelete(cmd: SimpleCommand): string[] {
  const { operands } = splitOptions(cmd.args);
  const dest = operands.at(-1);
  const critical = dest ? criticalTarget(dest) : undefined;
  return critical ? [`rsync --delete into ${critical}`] : [];
}

function writes(targets: ShellWord[]): string[] {
  return targets.filter(writeProtected).map((t) => `writes to ${t.value}`);
}

function redirectDangers(op: string, target: ShellWord): string[] {
  if (!/>/.test(op) || (op.includes('&') && /^(\d+|-)$/.test(target.value))) return [];
  const v = target.value;
  if (/^\/dev\/(tcp|udp)\//.test(v)) return ['opens a network connection from the shell (/dev/tcp)'];
  if (BLOCK_DEVICE.test(v)) return [`redirect onto the block device ${v}`];
  return writeProtected(target) ? [`writes to ${v}`] : [];
}

/** Short flags (letters), long flags (`--x`, without a value) and the operands. */
function splitOptions(args: readonly ShellWord[]): { flags: Set<string>; operands: ShellWord[] } {
  const flags = new Set<string>();
  const operands: ShellWord[] = [];
  let ended = false;
  for (const a of args) {
    const v = a.value;
    if (ended || !a.literal || !v.startsWith('-') || v === '-') operands.push(a);
    else if (v === '--') ended = true;
    else if (v.startsWith('--')) flags.add(v.split('=')[0]!);
    else for (const letter of v.slice(1)) flags.add(letter);
  }
  return { flags, operands };
}

function optionValues(args: readonly ShellWord[], names: string[]): ShellWord[] {
  const out: ShellWord[] = [];
  args.forEach((a, i) => {
    for (const n of names) {
      if (a.value === n && args[i + 1]) out.push(args[i + 1]!);
      else if (n.startsWith('--') && a.value.startsWith(`${n}=`))
        out.push({ ...a, value: a.value.slice(n.length + 1) });
      else if (!n.startsWith('--') && a.value.startsWith(n) && a.value.length > n.length && !a.value.startsWith('--'))
        out.push({ ...a, value: a.value.slice(n.length) });
    }
  });
  return out;
}

/** A path as segments: `root` is `/`, `~` or `.` (relative); `dynamic` when only known at run time. */
interface PathShape {
  root: '/' | '~' | '.' | 'dynamic';
  segments: string[];
}

function shapeOf(word: ShellWord): PathShape {
  let text = word.value;
  if (!word.literal) {
    const source = word.source.replace(/["']/g, '');
    const home = /^(\$HOME|\$\{HOME\}|~)(?=\/|$)/.exec(source);
    if (home) text = `~${source.slice(home[0].length)}`;
    else if (/^[$`]/.test(source) || /^\/[^/]*[$`]/.test(source)) return { root: 'dynamic', segments: [] };
    else text = source;
  }
  let root: PathShape['root'] = '.';
  let rest = text;
  if (text.startsWith('/')) root = '/';
  else if (text.startsWith('~')) {
    root = '~';
    const slash = text.indexOf('/');
    rest = slash < 0 ? '' : text.slice(slash);
  }
  const segments: string[] = [];
  for (const seg of rest.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..' && segments.length > 0 && segments.at(-1) !== '..') segments.pop();
    else if (seg === '..' && root === '/') continue;
    else segments.push(seg);
  }
  return { root, segments };
}

/** Why deleting / chmod-ing this target recursively is catastrophic, or `undefined`. */
export function criticalTarget(word: ShellWord): string | undefined {
  const { root, segments } = shapeOf(word);
  const shown = word.source;
  if (root === 'dynamic') return `${shown} (a path computed at run time: an empty value would make it /)`;
  const first = segments[0] ?? '';
  const glob = /[*?[]/.test(first);
  if (root === '/') {
    if (segments.length <= 1 || ROOT_DIRS.has(first) || glob || (first === 'home' && segments.length <= 2))
      return `${shown} (the system)`;
    return undefined;
  }
  if (root === '~') return segments.length <= 1 || glob ? `${shown} (your home folder)` : undefined;
  if (segments.length === 0) return `${shown} (the whole working folder)`;
  if (first === '..') return `${shown} (outside the working folder)`;
  if (segments.length === 1 && /^(\*|\.\*|\*\*|\.\[!\.\]\*)$/.test(first))
    return `${shown} (everything in the working folder)`;
  return undefined;
}

/** Writing (or deleting) this path changes the system, credentials or shell start-up. */
function writeProtected(word: ShellWord): boolean {
  const { root, segments } = shapeOf(word);
  if (root === '/') {
    const path = `/${segments.join('/')}`;
    if (segments[0] === 'dev') return !HARMLESS_DEVICES.test(path) && segments.length > 1;
    if (WRITE_PROTECTED_ROOT.has(segments[0] ?? '')) return true;
    return segments[0] === 'home' && HOME_PROTECTED.has(segments[2] ?? '');
  }
  return root === '~' && HOME_PROTECTED.has(segments[0] ?? '');
}

/** `git push --force`/`+ref`/`--delete`, `git clean -f`, `git reset --hard`. */
function gitDangers(cmd: SimpleCommand): string[] {
  const args = cmd.args.map((a) => a.value);
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-'))
    i += /^(-C|-c|--git-dir|--work-tree|--namespace|--exec-path)$/.test(args[i]!) ? 2 : 1;
  const sub = args[i];
  const rest = cmd.args.slice(i + 1);
  const { flags, operands } = splitOptions(rest);
  if (sub === 'push') {
    if (flags.has('f') || flags.has('--force') || flags.has('--force-with-lease') || flags.has('--force-if-includes'))
      return ['force push (rewrites the remote history)'];
    if (flags.has('--mirror')) return ['git push --mirror (overwrites every remote ref)'];
    if (flags.has('d') || flags.has('--delete') || flags.has('--prune')) return ['git push deletes remote branches'];
    if (operands.some((o) => o.value.startsWith('+'))) return ['force push (a +refspec rewrites the remote history)'];
    if (operands.slice(1).some((o) => o.value.startsWith(':'))) return ['git push deletes a remote branch'];
  }
  if (sub === 'clean' && (flags.has('f') || flags.has('--force')))
    return ['git clean deletes untracked files irrecoverably'];
  if (sub === 'reset' && flags.has('--hard')) return ['git reset --hard discards uncommitted changes'];
  return [];
}
