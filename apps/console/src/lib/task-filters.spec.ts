import { describe, expect, it } from '@jest/globals';
import { filtersFromQuery, filtersToApiQuery, filtersToQuery, matchesFilters, NO_FILTERS } from './task-filters';

describe('task filters in the URL', () => {
  it('reads every filter and drops values it does not know', () => {
    const filters = filtersFromQuery(new URLSearchParams('agent=bob@acme&role=sender&state=pending,bogus,completed&intent=shout&context_id=ctx-1'));
    expect(filters).toEqual({ ...NO_FILTERS, agent: 'bob@acme', role: 'sender', states: ['pending', 'completed'], intent: '', context_id: 'ctx-1' });
  });

  it('writes only what narrows the list, and the role only with an agent', () => {
    expect(filtersToQuery({ ...NO_FILTERS, role: 'recipient' }).toString()).toBe('');
    expect(filtersToQuery({ ...NO_FILTERS, agent: 'frank@acme', role: 'recipient', states: ['accepted', 'input_required'] }).toString()).toBe(
      'agent=frank%40acme&role=recipient&state=accepted%2Cinput_required',
    );
  });

  it('writes the org first, lowercase as handles spell it', () => {
    const filters = filtersFromQuery(new URLSearchParams('org=Payments&agent=ana@payments'));
    expect(filters.org).toBe('payments');
    expect(filtersToQuery(filters).toString()).toBe('org=payments&agent=ana%40payments');
  });

  it('round-trips through the URL', () => {
    const filters = { ...NO_FILTERS, agent: 'a@b', role: 'either' as const, states: ['failed' as const], intent: 'propose_action' as const, context_id: 'c' };
    expect(filtersFromQuery(filtersToQuery(filters))).toEqual(filters);
  });

  it('sends the time range to the API as ISO instants and leaves out a value that is not a time', () => {
    const query = filtersToApiQuery({ ...NO_FILTERS, created_after: '2026-01-02T03:04:00Z', created_before: 'not a time' });
    expect(query.get('created_after')).toBe('2026-01-02T03:04:00.000Z');
    expect(query.has('created_before')).toBe(false);
  });
});

describe('whether a live task passes the filters', () => {
  const task = { state: 'pending' as const, intent: 'inform' as const, sender: 'bob@acme', recipient: 'frank@acme', created_at: '2026-01-02T10:00:00Z' };

  it('checks the agent in the role asked for', () => {
    expect(matchesFilters(task, { ...NO_FILTERS, agent: 'frank@acme' })).toBe(true);
    expect(matchesFilters(task, { ...NO_FILTERS, agent: 'frank@acme', role: 'sender' })).toBe(false);
    expect(matchesFilters(task, { ...NO_FILTERS, agent: 'FRANK@acme', role: 'recipient' })).toBe(true);
    expect(matchesFilters(task, { ...NO_FILTERS, agent: 'ann@acme' })).toBe(false);
  });

  it('checks that one of the parties is of the org', () => {
    expect(matchesFilters(task, { ...NO_FILTERS, org: 'acme' })).toBe(true);
    expect(matchesFilters({ ...task, sender: 'ana@payments' }, { ...NO_FILTERS, org: 'payments' })).toBe(true);
    expect(matchesFilters(task, { ...NO_FILTERS, org: 'payments' })).toBe(false);
  });

  it('checks states, intent and the time range', () => {
    expect(matchesFilters(task, { ...NO_FILTERS, states: ['accepted'] })).toBe(false);
    expect(matchesFilters(task, { ...NO_FILTERS, intent: 'ask_question' })).toBe(false);
    expect(matchesFilters(task, { ...NO_FILTERS, created_after: '2026-01-02T11:00:00Z' })).toBe(false);
    expect(matchesFilters(task, { ...NO_FILTERS, created_before: '2026-01-02T11:00:00Z' })).toBe(true);
  });
});
