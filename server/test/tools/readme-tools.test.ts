import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The README's tools table is what a person reads to learn what the agent may do and what
// asks first; the schema snapshots are what the model is really given. They must agree.
const root = join(import.meta.dirname, '..', '..', '..');

function readmeTiers(): Map<string, string> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split('\n### Tools\n')[1]!.split('\n### ')[0]!;
  const tiers = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = /^\| (`[^|]+`) \| ([^|]+) \| [^|]+ \|$/.exec(line);
    if (!cells) continue;
    const names = cells[1]!.split(' / ').map((n) => n.replaceAll('`', '').trim());
    const each = cells[2]!.trim().replace(/ \(each\)$/, '');
    const given = each.split(' / ').map((t) => t.trim());
    names.forEach((name, i) => tiers.set(name, given.length === 1 ? given[0]! : given[i]!));
  }
  return tiers;
}

describe("README's tools table (TIER-1): every tool the model can be given, with its tier", () => {
  it('lists each snapshotted tool with the tier it is registered with', () => {
    const tiers = readmeTiers();
    const dir = join(import.meta.dirname, '__schemas__');
    const snapshotted = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(snapshotted.length).toBeGreaterThan(20);
    for (const file of snapshotted) {
      const declared = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { name: string; tier?: string };
      expect(tiers.has(declared.name), `README's tools table has no row for ${declared.name}`).toBe(true);
      if (declared.tier) expect(tiers.get(declared.name), declared.name).toBe(declared.tier);
    }
  });
});
