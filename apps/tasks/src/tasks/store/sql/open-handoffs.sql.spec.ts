import { OPEN_STATES_SQL } from '../../../database/migrations/1765845300000-OpenHandoffsBySenderOrg';
import { OPEN_HANDOFF_STATES_SQL } from './open-handoffs.sql';

describe('the open-handoffs count', () => {
  it('names the states of the partial index’s predicate, in its order, so the planner can use the index', () => {
    expect(OPEN_HANDOFF_STATES_SQL).toBe(OPEN_STATES_SQL);
  });
});
