/**
 * Linux process introspection for security tests: which TCP sockets does a process
 * (and its descendants) hold in LISTEN state? Reads /proc only, no `ss`/`lsof` needed.
 */
import fs from 'node:fs';

const TCP_LISTEN = '0A';

/** Socket inodes of the process's open file descriptors. */
export function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed while we looked
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  return inodes;
}

/** Local addresses (hex, as /proc shows them) of the process's listening TCP sockets. */
export function listeningTcpSockets(pid: number): string[] {
  const inodes = socketInodes(pid);
  const found: string[] = [];
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const [, local, , state] = cols;
      const inode = cols[9]!;
      if (state === TCP_LISTEN && inodes.has(inode)) found.push(local!);
    }
  }
  return found;
}

/** Unix socket inodes the process holds (to show the check sees sockets at all). */
export function unixSocketCount(pid: number): number {
  const inodes = socketInodes(pid);
  const text = fs.readFileSync(`/proc/${pid}/net/unix`, 'utf8');
  return text
    .split('\n')
    .slice(1)
    .filter((line) => {
      const cols = line.trim().split(/\s+/);
      return cols.length >= 7 && inodes.has(cols[6]!);
    }).length;
}

/** The pids of a process's children (direct). */
export function childPids(pid: number): number[] {
  try {
    const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
    return text.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
