import type { PlanNode } from '@cellmate/protocol';

/** A plan graph that cannot be run, with what to fix (the model gets `message`). */
export class PlanGraphError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanGraphError';
  }
}

/** How a graph's problems name its parts: a plan has nodes, an orchestration tasks. */
export interface GraphWords {
  item: string;
  graph: string;
}

const PLAN_WORDS: GraphWords = { item: 'node', graph: 'plan' };
const cap = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

/**
 * Checks a plan's nodes (SPEC MODE-3; an orchestration's tasks too, MODE-5): unique keys,
 * every `depends_on` names a node of the plan (and not itself), no cycles. Returns the
 * nodes in dependency order — each after all it depends on, otherwise in the order given —
 * which is the order approved work runs in. Pure.
 * @throws PlanGraphError naming the first problem and how to fix it
 */
export function orderPlan<T extends PlanNode>(nodes: readonly T[], words: GraphWords = PLAN_WORDS): T[] {
  const { item, graph } = words;
  const byKey = new Map<string, T>();
  for (const node of nodes) {
    if (byKey.has(node.key))
      throw new PlanGraphError(
        `Two ${item}s have the key "${node.key}". Keys must be unique: rename one and submit again.`
      );
    byKey.set(node.key, node);
  }
  for (const node of nodes) {
    for (const dep of node.depends_on) {
      if (dep === node.key)
        throw new PlanGraphError(`${cap(item)} "${node.key}" depends on itself. Remove "${dep}" from its depends_on.`);
      if (!byKey.has(dep)) {
        throw new PlanGraphError(
          `${cap(item)} "${node.key}" depends on "${dep}", which is not a ${item} of this ${graph} (keys: ${[...byKey.keys()].join(', ')}). Use one of those keys or add the ${item}.`
        );
      }
    }
  }
  const ordered: T[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (node: T, path: string[]): void => {
    const seen = state.get(node.key);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(node.key)), node.key];
      throw new PlanGraphError(
        `The dependencies form a cycle: ${cycle.join(' → ')}. ${/^[aeiou]/i.test(graph) ? 'An' : 'A'} ${graph} must be acyclic: drop one of these dependencies.`
      );
    }
    state.set(node.key, 'visiting');
    for (const dep of node.depends_on) visit(byKey.get(dep)!, [...path, node.key]);
    state.set(node.key, 'done');
    ordered.push(node);
  };
  for (const node of nodes) visit(node, []);
  return ordered;
}
