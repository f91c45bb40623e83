import { readFileSync } from 'node:fs';
import * as contracts from '@app/contracts';
import { AGENT_UPDATED_EVENT_SUBJECT, PUSH_CONFIG_EVENTS, taskEventSubject, TASK_EVENT_TYPES } from '@app/contracts';
import { probeSubject } from './nats-permission-check';
import {
  eventConsumerPermissions,
  natsInboxPrefix,
  RELAY_NATS_ROLES,
  relayNatsPermissions,
  requestSubjectsInTable,
  isPermittedReply,
  permittedReplyPrefixes,
  subjectMatches,
  type NatsPermissions,
} from './nats-permissions';
import { relayPermissionsConfig, withPermissionTable } from './nats-server-config';

function contractRequestSubjects(): string[] {
  return Object.entries(contracts)
    .filter(([name, value]) => name.endsWith('_SUBJECTS') && typeof value === 'object' && value !== null)
    .flatMap(([, value]) => Object.values(value as Record<string, string>));
}

const allows = (grants: NatsPermissions['publish'], subject: string): boolean => grants.some((grant) => subjectMatches(grant.subject, subject));

describe('the NATS permission table', () => {
  it('names every request subject of the contracts once, with the service that answers it', () => {
    expect([...requestSubjectsInTable()].sort()).toEqual([...contractRequestSubjects()].sort());
  });

  it.each(RELAY_NATS_ROLES)('lets %s subscribe only to its own request subjects, its inbox and the event subjects it follows', (role) => {
    const { subscribe, inboxPrefix } = relayNatsPermissions(role, 'acme');
    for (const grant of subscribe) {
      const own = grant.subject.startsWith(`acme.relay.${role}.v1.`);
      if (own && grant.subject.includes('*')) expect(grant.subject).toBe('acme.relay.notifier.v1.event_consumers.*.ensure');
      const inbox = grant.subject === `${inboxPrefix}.>`;
      const edgeFeeds = role === 'edge' && ['acme.relay.events.task.>', 'acme.relay.directory.v1.changes'].includes(grant.subject);
      const directoryChanges = role === 'tasks' && grant.subject === 'acme.relay.directory.v1.changes';
      expect({ subject: grant.subject, allowed: own || inbox || edgeFeeds || directoryChanges }).toEqual({ subject: grant.subject, allowed: true });
    }
  });

  it('gives the publishers of each event subject the right to publish it, and no one else', () => {
    const taskEvents = TASK_EVENT_TYPES.map((type) => `acme.${taskEventSubject(type)}`);
    const cases: Array<[string, string[]]> = [
      ...taskEvents.map((subject): [string, string[]] => [subject, ['tasks']]),
      ...Object.values(PUSH_CONFIG_EVENTS).map((subject): [string, string[]] => [`acme.${subject}`, ['tasks']]),
      [`acme.${AGENT_UPDATED_EVENT_SUBJECT}`, ['directory']],
    ];
    for (const [subject, publishers] of cases) {
      const allowed = RELAY_NATS_ROLES.filter((role) => allows(relayNatsPermissions(role, 'acme').publish, subject));
      expect({ subject, allowed }).toEqual({ subject, allowed: publishers });
    }
  });

  it('lets only the edge call the directory’s key and agent administration', () => {
    for (const subject of [
      'acme.relay.directory.v1.keys.create',
      'acme.relay.directory.v1.agents.create',
      'acme.relay.tasks.v1.admin.search',
      'acme.relay.tasks.v1.get',
    ]) {
      expect(RELAY_NATS_ROLES.filter((role) => allows(relayNatsPermissions(role, 'acme').publish, subject))).toEqual(['edge']);
    }
  });

  it('keeps deployments apart: nothing one prefix grants reaches another prefix’s subjects, streams or inboxes', () => {
    for (const role of RELAY_NATS_ROLES) {
      const acme = relayNatsPermissions(role, 'acme');
      const acmeProd = relayNatsPermissions(role, 'acme.prod');
      for (const grant of [...acmeProd.publish, ...acmeProd.subscribe]) {
        if (grant.subject === '$JS.API.INFO') continue;
        const concrete = probeSubject(grant.subject);
        expect({ role, concrete, reached: allows([...acme.publish, ...acme.subscribe], concrete) }).toEqual({ role, concrete, reached: false });
      }
    }
    expect(natsInboxPrefix('edge', 'acme')).not.toBe(natsInboxPrefix('edge', 'acme.prod'));
  });

  it('gives an event consumer nothing but its own durable consumer on the event stream, through imports of an account of its own', () => {
    const consumer = eventConsumerPermissions('audit', '');
    expect(consumer.account?.name).toBe('AGENTRELAY_CONSUMER_AUDIT');
    expect(consumer.account?.imports.map((entry) => [entry.localSubject, entry.subject, entry.responseType])).toEqual([
      ['relay.notifier.v1.event_consumers.audit.ensure', 'relay.notifier.v1.event_consumers.audit.ensure', 'singleton'],
      ['JS.RELAY.API.STREAM.INFO.RELAY_EVENTS', '$JS.API.STREAM.INFO.RELAY_EVENTS', 'singleton'],
      ['JS.RELAY.API.CONSUMER.INFO.RELAY_EVENTS.audit', '$JS.API.CONSUMER.INFO.RELAY_EVENTS.audit', 'singleton'],
      ['JS.RELAY.API.CONSUMER.MSG.NEXT.RELAY_EVENTS.audit', '$JS.API.CONSUMER.MSG.NEXT.RELAY_EVENTS.audit', 'stream'],
      ['$JS.ACK.RELAY_EVENTS.audit.>', '$JS.ACK.RELAY_EVENTS.audit.>', 'stream'],
    ]);
    expect(consumer.publish.map((grant) => grant.subject)).toEqual(consumer.account?.imports.map((entry) => entry.localSubject));
    expect(consumer.subscribe.map((grant) => grant.subject)).toEqual(['_INBOX_consumer_audit.>']);
    expect(consumer.allowResponses).toBe(false);
    expect(eventConsumerPermissions('audit', 'acme.prod').account?.name).toBe('AGENTRELAY_acme_prod_CONSUMER_AUDIT');
    expect(() => eventConsumerPermissions('a.b', '')).toThrow(/letters, digits/);
  });

  it('has a reply rule for every request subject a holder outside the relay may publish', () => {
    const requestSubjects = requestSubjectsInTable().map((subject) => contracts.SUBJECTS_ADDRESSED_BY_NAME[subject] ?? subject);
    for (const prefix of ['', 'acme.prod']) {
      const consumer = eventConsumerPermissions('audit', prefix);
      const outsideRequests = (consumer.account?.imports ?? [])
        .map((entry) => entry.subject)
        .filter((subject) => requestSubjects.some((pattern) => subjectMatches(contracts.prefixedSubject(prefix, pattern), subject)));
      expect(outsideRequests).toEqual([contracts.prefixedSubject(prefix, contracts.eventConsumerEnsureSubject('audit'))]);
      for (const subject of outsideRequests) expect(permittedReplyPrefixes(subject, prefix)).toBeDefined();
    }
  });
  it('is what the shipped NATS configuration holds (docker/nats/permissions.conf)', () => {
    expect(readFileSync('docker/nats/permissions.conf', 'utf8')).toBe(relayPermissionsConfig(''));
  });
});

describe('the reply subjects a request from outside the relay may be answered on', () => {
  const ensure = 'relay.notifier.v1.event_consumers.audit.ensure';

  it('are the caller’s own inbox and the reply NATS made for its account’s import', () => {
    expect(isPermittedReply(ensure, '_INBOX_consumer_audit.abc.1', '')).toBe(true);
    expect(isPermittedReply(ensure, '_R_.AbC123.xyz', '')).toBe(true);
    expect(isPermittedReply(`acme.${ensure}`, '_INBOX_consumer_audit_acme.abc', 'acme')).toBe(true);
  });

  it('are never a subject of the relay, another holder’s inbox, a look-alike prefix, or nothing', () => {
    for (const reply of [
      'relay.events.task.forged',
      'relay.ratelimit.agent-1',
      'relay.directory.v1.keys.create',
      '$JS.API.STREAM.PURGE.RELAY_EVENTS',
      '_INBOX_notifier.abc',
      '_INBOX_consumer_other.abc',
      '_INBOX_consumer_audit_x.abc',
      '_INBOX_consumer_audit',
      '_INBOX_consumer_audit.',
      '_R_.',
      '_INBOX_consumer_audit.abc'.replace('audit', 'audit_acme'),
      undefined,
    ]) {
      expect([reply, isPermittedReply(ensure, reply, '')]).toEqual([reply, false]);
    }
    expect(isPermittedReply(`acme.${ensure}`, '_INBOX_consumer_audit.abc', 'acme')).toBe(false);
  });

  it('are an inbox or an import’s reply on subjects only the relay’s processes call', () => {
    expect(permittedReplyPrefixes('relay.tasks.v1.get', '')).toBeUndefined();
    for (const reply of ['_INBOX.abc', '_INBOX_edge.abc.1', '_INBOX_notifier_acme.x', '_R_.AbC.1', undefined]) {
      expect([reply, isPermittedReply('relay.tasks.v1.get', reply, '')]).toEqual([reply, true]);
    }
    for (const reply of [
      'anything',
      'relay.events.task.created',
      'relay.ratelimit.bob.1',
      'relay.directory.v1.keys.create',
      '$JS.API.STREAM.PURGE.RELAY_EVENTS',
      '_INBOX',
      '_R_.',
    ]) {
      expect([reply, isPermittedReply('relay.tasks.v1.upstream_reports.append', reply, '')]).toEqual([reply, false]);
    }
  });
});

describe('subjectMatches', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['a.b', 'a.c', false],
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});

describe('the permission table in the docs', () => {
  it('is the table of the code (npm run nats:credentials -- --write-shipped after a change)', () => {
    const document = readFileSync('docs/nats-security.md', 'utf8');
    expect(withPermissionTable(document)).toBe(document);
  });
});
