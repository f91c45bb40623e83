import { eventStreamName, eventStreamSubjects } from './jetstream';

describe('event stream naming', () => {
  it('derives one stream per subject prefix', () => {
    expect(eventStreamName('')).toBe('RELAY_EVENTS');
    expect(eventStreamName('test_12_ab')).toBe('RELAY_EVENTS_test_12_ab');
    expect(eventStreamName('prod.eu')).toBe('RELAY_EVENTS_prod_eu');
  });

  it('captures every relay event under the prefix', () => {
    expect(eventStreamSubjects('')).toEqual(['relay.events.>']);
    expect(eventStreamSubjects('test_12_ab')).toEqual(['test_12_ab.relay.events.>']);
  });
});
