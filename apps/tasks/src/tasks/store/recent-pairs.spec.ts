import { RecentPairs } from './recent-pairs';

const at = 1_000_000;

/** A create of a → b that read the pair's count (`before`) and created. */
function readAndCreated(pairs: RecentPairs, before: number, nowMs = at): void {
  pairs.ended('a', 'b', { took: false, before, created: true, moved: false }, nowMs);
}

describe('RecentPairs', () => {
  it('gives no count for a pair no create of this process answered: the create reads it', () => {
    expect(new RecentPairs().take('a', 'b', at)).toBeNull();
  });

  it('gives the count a create left, its own handoff included, and counts the creates under way', () => {
    const pairs = new RecentPairs();
    readAndCreated(pairs, 1);
    expect(pairs.take('a', 'b', at)).toBe(2);
    expect(pairs.take('a', 'b', at)).toBe(3);
    // Another pair, and the reverse direction, are pairs of their own.
    expect(pairs.take('b', 'a', at)).toBeNull();
    expect(pairs.take('a', 'c', at)).toBeNull();
  });

  it('gives the place of a create that ended without creating again', () => {
    const pairs = new RecentPairs();
    readAndCreated(pairs, 2);
    expect(pairs.take('a', 'b', at)).toBe(3);
    expect(pairs.take('a', 'b', at)).toBe(4);
    // Refused on the kept count, or its statement failed: it ended without creating.
    pairs.ended('a', 'b', { took: true, created: false, moved: false }, at);
    expect(pairs.take('a', 'b', at)).toBe(4);
  });

  it('keeps the highest count when creates under way together answer out of order', () => {
    const pairs = new RecentPairs();
    readAndCreated(pairs, 0);
    expect(pairs.take('a', 'b', at)).toBe(1);
    expect(pairs.take('a', 'b', at)).toBe(2);
    // The second saw the first's handoff; the first answers last, from its older snapshot.
    pairs.ended('a', 'b', { took: true, before: 2, created: true, moved: false }, at + 1);
    pairs.ended('a', 'b', { took: true, before: 1, created: true, moved: false }, at + 2);
    expect(pairs.take('a', 'b', at + 3)).toBe(3);
  });

  it('reads the pair before each create for a minute once another writer added to it', () => {
    const pairs = new RecentPairs();
    readAndCreated(pairs, 0);
    expect(pairs.take('a', 'b', at)).toBe(1);
    pairs.ended('a', 'b', { took: true, created: false, moved: true }, at);
    expect(pairs.take('a', 'b', at + 1)).toBeNull();
    // The reads go on answering the count meanwhile; after the minute the kept count is used again.
    readAndCreated(pairs, 3, at + 2);
    expect(pairs.take('a', 'b', at + 59_999)).toBeNull();
    expect(pairs.take('a', 'b', at + 60_000)).toBe(4);
  });

  it('forgets a count a minute after it was answered: every handoff it counted has left the window', () => {
    const pairs = new RecentPairs();
    readAndCreated(pairs, 3);
    expect(pairs.take('a', 'b', at + 59_999)).toBe(4);
    expect(pairs.take('a', 'b', at + 60_000)).toBeNull();
  });

  it('keeps at most its maximum of pairs, forgetting the one answered longest ago', () => {
    const pairs = new RecentPairs(2);
    pairs.ended('a', 'b', { took: false, before: 0, created: true, moved: false }, at);
    pairs.ended('a', 'c', { took: false, before: 0, created: true, moved: false }, at + 1);
    pairs.ended('a', 'b', { took: false, before: 1, created: true, moved: false }, at + 2);
    pairs.ended('a', 'd', { took: false, before: 0, created: true, moved: false }, at + 3);
    expect(pairs.size).toBe(2);
    expect(pairs.take('a', 'c', at + 4)).toBeNull();
    expect(pairs.take('a', 'b', at + 4)).toBe(2);
    expect(pairs.take('a', 'd', at + 4)).toBe(1);
  });
});
