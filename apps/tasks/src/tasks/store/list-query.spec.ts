import { encodeCursor } from './list-cursor';
import { listQuery } from './list-query';

const CALLER = '6f1c1d2e-0000-4000-8000-000000000001';

describe('the list query', () => {
  it('passes every value as a parameter, the page size too, and counts the filter without the cursor or the page size', () => {
    const query = listQuery({
      caller_id: CALLER,
      role: 'recipient',
      states: ['pending'],
      context_id: 'ctx-1',
      limit: 20,
      cursor: encodeCursor({ order: 'created', id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' }),
    });
    expect(query.values).toEqual([CALLER, ['pending'], 'ctx-1', '01HXYZ4K2VNJQP7R8MWDB3CSTF', 21]);
    expect(query.text).toContain('LIMIT $5::int');
    expect(query.text).not.toContain('ctx-1');
    expect(Math.max(...[...query.text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])))).toBe(query.values.length);
    expect(query.filter).toEqual({
      clauses: [`t."recipient_id" >= $1 AND t."recipient_id" <= $1`, `NOT t."hidden_from_recipient"`, `t."state" = ANY($2::text[])`, `t."context_id" = $3`],
      values: [CALLER, ['pending'], 'ctx-1'],
    });
  });

  it('names one prepared statement per text: the same for another caller or page size, another for another filter shape', () => {
    const inbox = listQuery({ caller_id: CALLER, role: 'recipient' });
    expect(listQuery({ caller_id: 'someone-else', role: 'recipient', limit: 10 }).name).toBe(inbox.name);
    expect(listQuery({ caller_id: CALLER, role: 'sender' }).name).not.toBe(inbox.name);
    expect(listQuery({ caller_id: CALLER, role: 'recipient', states: ['pending'] }).name).not.toBe(inbox.name);
    expect(listQuery({ caller_id: CALLER, role: 'recipient', order: 'status' }).name).not.toBe(inbox.name);
    expect(inbox.name).toMatch(/^tasks-list-[0-9a-f]{20}$/);
  });

  it("orders a role's page by that role's index, led by its column; both roles by id or status time", () => {
    expect(listQuery({ caller_id: CALLER }).text).toMatch(/ORDER BY t\."recipient_id", t\."id" DESC\s+LIMIT/);
    expect(listQuery({ caller_id: CALLER, role: 'sender', order: 'status' }).text).toMatch(
      /ORDER BY t\."sender_id", t\."status_timestamp" DESC, t\."id" DESC\s+LIMIT/,
    );
    const either = listQuery({ caller_id: CALLER, role: 'either' });
    expect(either.text).toMatch(/ORDER BY t\."id" DESC\s+LIMIT/);
    // A task held for approval (hidden from its recipient) is the sender's only.
    expect(either.filter.clauses[0]).toBe(`(t."sender_id" = $1 OR (t."recipient_id" = $1 AND NOT t."hidden_from_recipient"))`);
    expect(either.text).toContain(`t."recipient_id" >= $1 AND t."recipient_id" <= $1 AND NOT t."hidden_from_recipient"`);
  });
});
