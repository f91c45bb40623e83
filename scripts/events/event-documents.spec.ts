import { Parser } from '@asyncapi/parser';
import { eventSchemaFileName, RELAY_EVENT_KINDS, TASK_EVENT_TYPES, taskEventSubject } from '@app/contracts';
import { DEFAULT_EVENTS_PUBLIC_URL, eventAsyncApiDocument, RELAY_NATS_ROLES, relayNatsPermissions, subjectMatches } from '@app/messaging';
import { driftedEventDocuments, eventDocumentFiles } from './event-documents';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Resolves a local JSON pointer (`#/components/messages/x`) in `document`. */
function resolve(document: Json, ref: string): unknown {
  expect(ref.startsWith('#/')).toBe(true);
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, token) => (node as Json | undefined)?.[token.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}

function channelAddresses(document: Json): string[] {
  return Object.values(document.channels as Record<string, { address: string }>).map((channel) => channel.address);
}

/** The publish grants of relay events in the permission table: what each service may publish on the event stream. */
function eventPublishGrants(subjectPrefix: string): Array<{ role: string; subject: string }> {
  const root = subjectPrefix ? `${subjectPrefix}.relay.events.` : 'relay.events.';
  return RELAY_NATS_ROLES.flatMap((role) =>
    relayNatsPermissions(role, subjectPrefix)
      .publish.filter((grant) => grant.subject.startsWith(root))
      .map((grant) => ({ role, subject: grant.subject })),
  );
}

describe('the generated event documents', () => {
  it('are checked in as the code makes them (run npm run events:documents after changing an event)', () => {
    expect(driftedEventDocuments(process.cwd())).toEqual([]);
    expect([...eventDocumentFiles().keys()]).toContain('docs/events/asyncapi.json');
  });

  it('write one JSON Schema per event type and version', () => {
    const files = [...eventDocumentFiles().keys()];
    for (const kind of RELAY_EVENT_KINDS) expect(files).toContain(`docs/events/schemas/${eventSchemaFileName(kind)}`);
    for (const type of TASK_EVENT_TYPES) expect(files).toContain(`docs/events/schemas/task.${type}.v1.json`);
  });

  describe.each(['', 'acme.prod'])('the AsyncAPI document (subject prefix "%s")', (subjectPrefix) => {
    const document = eventAsyncApiDocument({ publicUrl: DEFAULT_EVENTS_PUBLIC_URL, subjectPrefix });
    const at = (subject: string): string => (subjectPrefix ? `${subjectPrefix}.${subject}` : subject);

    it('names every subject a service may publish on the event stream (walking the permission table)', () => {
      const grants = eventPublishGrants(subjectPrefix);
      expect(grants.map((grant) => grant.role).sort()).toEqual(['directory', 'tasks', 'tasks']);
      const addresses = channelAddresses(document);
      for (const grant of grants) expect([grant.subject, addresses.some((address) => subjectMatches(grant.subject, address))]).toEqual([grant.subject, true]);
      // …and nothing the services may not publish, each channel granted to the service the catalog names.
      for (const kind of RELAY_EVENT_KINDS) {
        expect(grants.some((grant) => grant.role === kind.publisher && subjectMatches(grant.subject, at(kind.subject)))).toBe(true);
      }
      for (const type of TASK_EVENT_TYPES) expect(addresses).toContain(at(taskEventSubject(type)));
      expect(addresses).toEqual(
        expect.arrayContaining([at('relay.events.push_config.set'), at('relay.events.push_config.deleted'), at('relay.events.agent.updated')]),
      );
      expect(new Set(addresses).size).toBe(addresses.length);
    });

    it('is AsyncAPI 3.0 whose references all resolve: channels → messages → payload schemas, operations → channels', () => {
      expect(document.asyncapi).toBe('3.0.0');
      expect(document.info).toEqual(expect.objectContaining({ title: expect.any(String), version: expect.any(String) }));
      for (const [name, channel] of Object.entries(document.channels as Record<string, Json>)) {
        for (const message of Object.values(channel.messages as Record<string, { $ref: string }>)) {
          const target = resolve(document, message.$ref) as Json;
          expect({ name, resolved: Boolean(target) }).toEqual({ name, resolved: true });
          const payload = resolve(document, target.payload.$ref) as Json;
          expect(payload.type).toBe('object');
          expect(target.examples[0].payload).toEqual(expect.objectContaining({ event_id: target.examples[0].headers['ce-id'] }));
          expect(target.headers.required).toEqual(expect.arrayContaining(['ce-id', 'ce-source', 'ce-type', 'ce-specversion']));
        }
      }
      for (const operation of Object.values(document.operations as Record<string, Json>)) {
        expect(operation.action).toBe('send');
        expect(resolve(document, operation.channel.$ref)).toBeDefined();
        for (const message of operation.messages as Array<{ $ref: string }>) {
          expect(message.$ref.startsWith(operation.channel.$ref + '/messages/')).toBe(true);
          expect(resolve(document, message.$ref)).toBeDefined();
        }
      }
    });
  });

  it('passes @asyncapi/parser validation with no errors', async () => {
    const { diagnostics } = await new Parser().parse(JSON.stringify(eventAsyncApiDocument({ publicUrl: DEFAULT_EVENTS_PUBLIC_URL, subjectPrefix: '' })));
    expect(diagnostics.filter((diagnostic) => diagnostic.severity === 0)).toEqual([]);
  });
});
