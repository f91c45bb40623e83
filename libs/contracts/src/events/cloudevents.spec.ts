import {
  cloudEventAttributes,
  cloudEventHeaders,
  decodeCloudEventHeaderValue,
  encodeCloudEventHeaderValue,
  RELAY_EVENT_KINDS,
  readCloudEventHeaders,
  type TaskEvent,
} from '@app/contracts';

describe('CloudEvents attributes as NATS headers (binary content mode)', () => {
  it('percent-encodes space, double quote, percent and what is not printable ASCII, as the NATS binding asks', () => {
    expect(encodeCloudEventHeaderValue('Euro € 😀')).toBe('Euro%20%E2%82%AC%20%F0%9F%98%80');
    expect(encodeCloudEventHeaderValue('a"b%c')).toBe('a%22b%25c');
    expect(encodeCloudEventHeaderValue('http://127.0.0.1:8080/schemas/events/task.created.v1.json')).toBe(
      'http://127.0.0.1:8080/schemas/events/task.created.v1.json',
    );
    expect(decodeCloudEventHeaderValue('Euro%20%e2%82%ac%20%F0%9F%98%80')).toBe('Euro € 😀');
    expect(decodeCloudEventHeaderValue('"quoted value"')).toBe('quoted value');
    expect(() => decodeCloudEventHeaderValue('%C0%A0')).toThrow();
  });

  it('maps a task event: id = event_id, type per event type and version, subject = task id, time, dataschema', () => {
    const kind = RELAY_EVENT_KINDS.find((candidate) => candidate.name === 'task.completed')!;
    const event = kind.example as TaskEvent;
    const attributes = cloudEventAttributes(kind as never, event as never, 'https://relay.example.com/');
    expect(attributes).toEqual({
      specversion: '1.0',
      id: event.event_id,
      source: 'https://relay.example.com',
      type: 'dev.agentrelay.task.completed.v1',
      subject: event.task_id,
      time: event.occurred_at,
      datacontenttype: 'application/json',
      dataschema: 'https://relay.example.com/schemas/events/task.completed.v1.json',
    });
    const headers = cloudEventHeaders(attributes);
    expect(headers['ce-id']).toBe(event.event_id);
    const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    expect(readCloudEventHeaders((name) => lower.get(name.toLowerCase()))).toEqual(attributes);
    expect(readCloudEventHeaders(() => undefined)).toBeNull();
  });
});
