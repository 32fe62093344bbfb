/** Review's verdict table (SPEC MODE-4, issue #16 acceptance): axes only make it stricter; consensus needs a peer. */
import { describe, expect, it } from 'vitest';
import {
  approveNode,
  computeVerdict,
  ReviewConsensusError,
  reviewNodeParameters,
  type AxisResult,
  type ReviewNode
} from '../../src/modes/review/review.js';

const ALL_PASS: AxisResult[] = [
  { axis: 'lint', status: 'passed' },
  { axis: 'type-check', status: 'passed' },
  { axis: 'tests', status: 'passed' }
];
const finding = (over: Partial<ReviewNode> = {}): ReviewNode => ({
  id: 'n1',
  author: 'reviewer-a',
  state: 'open',
  kind: 'bug',
  priority: 'P2',
  confidence: 0.8,
  body: 'x',
  ...over
});
const axes = (over: Record<string, AxisResult['status'] | undefined>): AxisResult[] =>
  ALL_PASS.flatMap((a) => (a.axis in over ? (over[a.axis] ? [{ ...a, status: over[a.axis]! }] : []) : [a]));

describe('review verdict (MODE-4)', () => {
  it.each([
    ['no findings, every axis passed', [], ALL_PASS, 'Ship'],
    ['failed lint axis', [], axes({ lint: 'failed' }), 'Block'],
    ['type-check could not run', [], axes({ 'type-check': 'not-run' }), 'Hold'],
    ['tests never reported (absence of evidence)', [], axes({ tests: undefined }), 'Hold'],
    ['no axes at all', [], [], 'Hold'],
    ['failed axis beats a not-run one', [], axes({ lint: 'failed', tests: 'not-run' }), 'Block'],
    [
      'a P2/P3 finding ships',
      [finding(), finding({ id: 'n2', priority: 'P3', state: 'consensusReady', approvedBy: 'b' })],
      ALL_PASS,
      'Ship'
    ],
    ['an unconfirmed P0 holds', [finding({ priority: 'P0' })], ALL_PASS, 'Hold'],
    [
      'a confirmed P0 blocks',
      [finding({ priority: 'P0', state: 'consensusReady', approvedBy: 'reviewer-b' })],
      ALL_PASS,
      'Block'
    ],
    [
      'a confirmed P1 holds',
      [finding({ priority: 'P1', state: 'consensusReady', approvedBy: 'reviewer-b' })],
      ALL_PASS,
      'Hold'
    ],
    [
      'axes never loosen a finding: confirmed P0 with all passing',
      [finding({ priority: 'P0', state: 'consensusReady', approvedBy: 'b' })],
      ALL_PASS,
      'Block'
    ],
    ['a P1 hold becomes Block on a failed axis', [finding({ priority: 'P1' })], axes({ tests: 'failed' }), 'Block']
  ] as const)('%s', (_label, nodes, results, verdict) => {
    expect(computeVerdict(nodes, results).verdict).toBe(verdict);
  });

  it('says why', () => {
    expect(computeVerdict([], axes({ lint: 'failed', tests: 'not-run' })).reasons).toEqual([
      'lint failed → Block',
      'tests not-run → Hold'
    ]);
  });

  it('consensus needs a peer: the author approving its own node is refused', () => {
    const node = finding();
    expect(() => approveNode(node, 'reviewer-a')).toThrow(ReviewConsensusError);
    expect(() => approveNode(node, 'reviewer-a')).toThrow(
      'Refused: reviewer-a wrote finding n1 and cannot approve it; another reviewer has to.'
    );
    expect(approveNode(node, 'reviewer-b')).toMatchObject({ state: 'consensusReady', approvedBy: 'reviewer-b' });
    expect(node.state).toBe('open');
  });

  it.each([
    ['bad priority', { kind: 'bug', priority: 'P4', confidence: 0.5, body: 'x' }, /priority: must be one of P0/],
    ['missing priority', { kind: 'bug', confidence: 0.5, body: 'x' }, /priority/],
    [
      'confidence above 1',
      { kind: 'bug', priority: 'P1', confidence: 1.5, body: 'x' },
      /confidence: must be at most 1/
    ],
    ['missing confidence', { kind: 'bug', priority: 'P1', body: 'x' }, /confidence/],
    ['unknown kind', { kind: 'rant', priority: 'P1', confidence: 0.5, body: 'x' }, /kind: must be one of bug/],
    [
      'backwards lines',
      { kind: 'bug', priority: 'P1', confidence: 0.5, body: 'x', anchor: { file: 'a.py', lines: [9, 3] } },
      /first line must not be after the last/
    ]
  ])('%s is rejected at the call boundary', (_label, args, message) => {
    const parsed = reviewNodeParameters.safeParse(args);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')).toMatch(message);
  });

  it('a well-formed finding passes', () => {
    expect(
      reviewNodeParameters.safeParse({
        kind: 'bug',
        priority: 'P0',
        confidence: 1,
        anchor: { file: 'src/a.py', lines: [3, 9] },
        body: 'Off by one.'
      }).success
    ).toBe(true);
  });
});
