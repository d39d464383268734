import { describe, expect, it } from 'vitest';
import { type GraphNode, HatcheryGraph } from '../../src/engine/graph.js';

const node = (name: string, def: GraphNode['def'] = {}, kind = 'drone'): GraphNode => ({ name, kind, def });
const schema = (title: string) => ({ type: 'object', title });

describe('the graph of a hatchery file', () => {
  it('lists each node’s successors: next entries without END, then on_limit', () => {
    const g = new HatcheryGraph(undefined, [
      node('A', { next: ['B', 'END', 'C'], on_limit: 'D' }),
      node('B', { next: 'END' }),
      node('C', { next: 'D' }),
      node('D'),
    ]);
    expect(g.successors('A')).toEqual(['B', 'C', 'D']);
    expect(g.successors('B')).toEqual([]);
    expect(g.successors('C')).toEqual(['D']);
    expect(g.successors('D')).toEqual([]);
    expect(g.successors('nope')).toEqual([]);
    expect([...g.names]).toEqual(['A', 'B', 'C', 'D']);
    expect(g.start).toBe('A');
    expect(g.node('C')?.def.next).toBe('D');
    expect(g.endsRuns('A')).toBe(true);
    expect(g.endsRuns('C')).toBe(false);
    expect(g.endsRuns('D')).toBe(true);
  });

  it('finds the shortest path back through a cycle, and none when the target is unreachable', () => {
    // Loop -> Body -> Check -> (Body | Loop): the chain from Body reaches Loop again.
    const g = new HatcheryGraph('Loop', [
      node('Loop', { next: 'After' }, 'loop'),
      node('Body', { next: 'Check' }),
      node('Check', { next: ['Body', 'Fix'], on_limit: 'Loop' }),
      node('Fix', { next: 'Body' }),
      node('After'),
    ]);
    expect(g.pathBack('Body', 'Loop')).toEqual(['Body', 'Check', 'Loop']);
    expect(g.pathBack('Fix', 'Check')).toEqual(['Fix', 'Body', 'Check']);
    // A cycle that never reaches the target ends the search instead of spinning.
    expect(g.pathBack('Body', 'After')).toEqual(['Body', 'Check', 'Loop', 'After']);
    expect(g.pathBack('After', 'Loop')).toBeUndefined();
    expect(g.pathBack('Fix', 'Nowhere')).toBeUndefined();
  });

  it('takes the final output schema from the one reachable node where runs end', () => {
    const one = new HatcheryGraph(undefined, [
      node('A', { next: 'B', output_schema: schema('not the end') }),
      node('B', { output_schema: schema('end') }),
      // Not reachable from the start: a branch body's schema never counts.
      node('Branch', { output_schema: schema('branch') }),
    ]);
    expect(one.finalOutputSchema).toEqual(schema('end'));
  });

  it('has no final output schema with two ends, or with none', () => {
    const two = new HatcheryGraph('A', [
      node('A', { next: ['B', 'END'] }),
      node('B', { output_schema: schema('B') }),
    ]);
    expect(two.finalOutputSchema).toBeUndefined();
    const viaOnLimit = new HatcheryGraph('A', [
      node('A', { next: 'A', on_limit: 'B', output_schema: schema('A') }),
      node('B', { output_schema: schema('B') }),
    ]);
    expect(viaOnLimit.finalOutputSchema).toEqual(schema('B'));
    const none = new HatcheryGraph('A', [
      node('A', { next: 'B', output_schema: schema('A') }),
      node('B', { next: 'A', output_schema: schema('B') }),
    ]);
    expect(none.finalOutputSchema).toBeUndefined();
    expect(new HatcheryGraph(undefined, []).finalOutputSchema).toBeUndefined();
  });

  it('knows which drones another drone continues with conversation', () => {
    const g = new HatcheryGraph(undefined, [
      node('Plan'),
      node('Refine', { conversation: 'Plan', next: 'Again' }),
      node('Again', { conversation: 'Refine' }),
      node('Alone'),
    ]);
    expect([...g.conversationTargets].sort()).toEqual(['Plan', 'Refine']);
    expect(g.conversationTargets.has('Alone')).toBe(false);
  });
});
