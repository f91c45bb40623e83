import { TERMINAL_STATES_SQL as INDEX_PREDICATE_STATES } from '../database/migrations/1764580000000-Retention';
import { TERMINAL_STATES_SQL } from './retention-sql';

describe('the retention sweep of terminal tasks', () => {
  it('names the terminal states as the partial index the migration made does, so that the index serves it', () => {
    expect(TERMINAL_STATES_SQL).toBe(INDEX_PREDICATE_STATES);
  });
});
