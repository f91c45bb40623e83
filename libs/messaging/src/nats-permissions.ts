import {
  ADMIN_AUDIT_SUBJECTS,
  APPROVALS_SUBJECTS,
  ADMIN_DELIVERIES_SUBJECTS,
  ADMIN_TASKS_SUBJECTS,
  AGENT_UPDATED_EVENT_SUBJECT,
  DIRECTORY_CHANGES_SUBJECT,
  DIRECTORY_SUBJECTS,
  EVENT_CONSUMER_SUBJECTS,
  eventConsumerEnsureSubject,
  SUBJECTS_ADDRESSED_BY_NAME,
  HEALTH_SUBJECTS,
  NOTIFIER_SUBJECTS,
  ORG_SUBJECTS,
  PERSON_ROLE_SUBJECTS,
  PUSH_CONFIG_SUBJECTS,
  prefixedSubject,
  TASK_EVENT_SUBJECT_PREFIX,
  TASKS_SUBJECTS,
  UPSTREAM_REPORT_SUBJECTS,
  type RelayService,
} from '@app/contracts';
import { eventStreamName, RELAY_EVENTS_SUBJECT_ROOT } from './jetstream';
import { keyFilterBucketName } from './key-filter-bucket';
import { CONSOLE_SESSION_SUBJECT_ROOT, consoleSessionStreamName, prefixScope, RATE_LIMIT_SUBJECT_ROOT, rateLimitStreamName } from './stream-names';

/** A relay process that connects to NATS. */
export type RelayNatsRole = 'edge' | RelayService;

export const RELAY_NATS_ROLES: readonly RelayNatsRole[] = ['edge', 'tasks', 'directory', 'notifier'];

/** One subject (NATS wildcards allowed) a process may use, and why it needs it. */
export interface NatsGrant {
  subject: string;
  why: string;
}

/** Everything one NATS user may do: nothing outside these lists. */
export interface NatsPermissions {
  /** Who holds them: a relay role, or `consumer <name>` for an event consumer. */
  holder: string;
  /** The inbox prefix its connections use; replies to it are its alone. */
  inboxPrefix: string;
  publish: NatsGrant[];
  subscribe: NatsGrant[];
  /** May publish a reply to a request it received (the services answer on the caller's inbox). */
  allowResponses: boolean;
  /**
   * For a holder in a NATS account of its own (an event consumer): the account, and the subjects it
   * imports from the relay's account. Nothing else of the relay's account is reachable from it.
   */
  account?: { name: string; imports: NatsImport[] };
}

/**
 * One subject an account of its own imports from the relay's account as a service: the request
 * crosses into the relay's account, and its reply subject is replaced by one NATS makes (`_R_.…`)
 * that leads back into the importing account, so a reply subject the importer names never reaches
 * a subject of the relay's account.
 */
export interface NatsImport {
  /** The subject in the relay's account (exported to this account alone). */
  subject: string;
  /** The subject the holder publishes in its own account. */
  localSubject: string;
  /** `stream`: many messages answer one request (a pull, a `+NXT` ack). */
  responseType: 'singleton' | 'stream';
  why: string;
}

/**
 * The JetStream API prefix an event consumer uses in its own account (nats.js: `jetstream(nc,
 * { apiPrefix })`). Not `$JS.API`: NATS answers that in an account without JetStream itself
 * ("JetStream not enabled for account"), racing the import.
 */
export const EVENT_CONSUMER_JS_API_PREFIX = 'JS.RELAY.API';

/** The NATS account of the relay's own processes under a subject prefix (what `npm run nats:credentials` writes). */
export function relayAccountName(subjectPrefix: string): string {
  const scope = prefixScope(subjectPrefix);
  return scope ? `AGENTRELAY_${scope}` : 'AGENTRELAY';
}

/** The NATS account of one event consumer: its own, importing from the relay's account what it may use. */
export function eventConsumerAccountName(name: string, subjectPrefix: string): string {
  return `${relayAccountName(subjectPrefix)}_CONSUMER_${name.toUpperCase()}`;
}

/**
 * Which role calls which request subject. Every request subject of the contracts appears here once:
 * its service subscribes to it (in its queue group), the roles listed publish to it.
 */
const REQUEST_CALLERS: ReadonlyArray<{ subjects: readonly string[]; service: RelayService; callers: readonly RelayNatsRole[]; why?: string }> = [
  { subjects: Object.values(TASKS_SUBJECTS), service: 'tasks', callers: ['edge'] },
  {
    subjects: Object.values(UPSTREAM_REPORT_SUBJECTS),
    service: 'tasks',
    callers: ['notifier'],
    why: 'reports an upstream agent’s answers: the tasks service makes them as the recipient, only on a handoff delivered to an upstream agent and not held',
  },
  { subjects: Object.values(ADMIN_TASKS_SUBJECTS), service: 'tasks', callers: ['edge'] },
  // A person's approval or denial of a held handoff, through the admin API.
  { subjects: Object.values(APPROVALS_SUBJECTS), service: 'tasks', callers: ['edge'] },
  {
    subjects: [PUSH_CONFIG_SUBJECTS.set, PUSH_CONFIG_SUBJECTS.get, PUSH_CONFIG_SUBJECTS.list, PUSH_CONFIG_SUBJECTS.delete],
    service: 'tasks',
    callers: ['edge'],
  },
  {
    subjects: [PUSH_CONFIG_SUBJECTS.target],
    service: 'tasks',
    callers: ['notifier'],
    why: 'reads a push config, its token and credentials sealed to the notifier’s key',
  },
  { subjects: [HEALTH_SUBJECTS.tasks], service: 'tasks', callers: ['edge'] },
  {
    // acceptUpstream: an operator's acceptance of a pending card change, the one write of where the relay delivers to an upstream agent.
    subjects: Object.values(DIRECTORY_SUBJECTS).filter((subject) => subject !== DIRECTORY_SUBJECTS.getAgent && subject !== DIRECTORY_SUBJECTS.putUpstream),
    service: 'directory',
    callers: ['edge'],
  },
  // The tasks service checks that the recipient a report is made for is an upstream agent.
  { subjects: [DIRECTORY_SUBJECTS.getAgent], service: 'directory', callers: ['edge', 'notifier', 'tasks'] },
  {
    subjects: [DIRECTORY_SUBJECTS.putUpstream],
    service: 'directory',
    callers: ['notifier'],
    why: 'stores a refreshed card’s profile; the directory refuses any change of where or how the relay delivers',
  },
  { subjects: Object.values(ADMIN_AUDIT_SUBJECTS), service: 'directory', callers: ['edge'] },
  { subjects: Object.values(ORG_SUBJECTS).filter((subject) => subject !== ORG_SUBJECTS.quotas), service: 'directory', callers: ['edge'] },
  {
    subjects: [ORG_SUBJECTS.quotas],
    service: 'directory',
    callers: ['edge', 'tasks', 'notifier'],
    why: 'reads an org’s quotas: the tasks service its stored bytes, the notifier its upstream deliveries in flight',
  },
  { subjects: Object.values(PERSON_ROLE_SUBJECTS), service: 'directory', callers: ['edge'] },
  { subjects: [HEALTH_SUBJECTS.directory], service: 'directory', callers: ['edge'] },
  {
    subjects: Object.values(NOTIFIER_SUBJECTS).filter((subject) => subject !== NOTIFIER_SUBJECTS.provisionWebhookSecret),
    service: 'notifier',
    callers: ['edge'],
  },
  { subjects: [NOTIFIER_SUBJECTS.provisionWebhookSecret], service: 'notifier', callers: ['directory'] },
  { subjects: Object.values(ADMIN_DELIVERIES_SUBJECTS), service: 'notifier', callers: ['edge'] },
  { subjects: [HEALTH_SUBJECTS.notifier], service: 'notifier', callers: ['edge'] },
  // Called by event consumers, each on the subject of its own name (eventConsumerPermissions).
  { subjects: [EVENT_CONSUMER_SUBJECTS.ensure], service: 'notifier', callers: [] },
];

/** Every request subject the services answer, unprefixed (a test walks the contracts against it). */
export function requestSubjectsInTable(): string[] {
  return REQUEST_CALLERS.flatMap((entry) => entry.subjects);
}

/** The inbox prefix of a holder's connections: one token per holder and deployment, so no one reads another's replies. */
export function natsInboxPrefix(holder: string, subjectPrefix: string): string {
  const scope = prefixScope(subjectPrefix);
  const name = holder.replace(/[^A-Za-z0-9_-]/g, '_');
  return scope ? `_INBOX_${name}_${scope}` : `_INBOX_${name}`;
}

/** The JetStream API calls that look after one stream of a holder's own: info, create, update. */
function ownStream(stream: string, why: string): NatsGrant[] {
  return [
    { subject: `$JS.API.STREAM.INFO.${stream}`, why },
    { subject: `$JS.API.STREAM.CREATE.${stream}`, why },
    { subject: `$JS.API.STREAM.UPDATE.${stream}`, why },
  ];
}

/** Reading one stream through consumers the holder makes itself (ordered or durable), and acking them. */
function streamReader(stream: string, why: string, consumer = '*'): NatsGrant[] {
  return [
    { subject: `$JS.API.CONSUMER.CREATE.${stream}.${consumer}`, why },
    { subject: `$JS.API.CONSUMER.CREATE.${stream}.${consumer}.>`, why },
    { subject: `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${consumer}`, why },
    { subject: `$JS.API.CONSUMER.INFO.${stream}.${consumer}`, why },
    { subject: `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`, why },
    { subject: `$JS.API.CONSUMER.DELETE.${stream}.${consumer}`, why },
    { subject: `$JS.ACK.${stream}.${consumer}.>`, why },
    { subject: `$JS.FC.${stream}.${consumer}.>`, why },
  ];
}

/** Reading single messages of a stream by subject or sequence. */
function messageGets(stream: string, why: string): NatsGrant[] {
  return [
    { subject: `$JS.API.STREAM.MSG.GET.${stream}`, why },
    { subject: `$JS.API.DIRECT.GET.${stream}`, why },
    { subject: `$JS.API.DIRECT.GET.${stream}.>`, why },
  ];
}

const JETSTREAM_INFO: NatsGrant = { subject: '$JS.API.INFO', why: 'JetStream clients read the account info once as they start' };

function requestGrants(role: RelayNatsRole, subjectPrefix: string): { publish: NatsGrant[]; subscribe: NatsGrant[] } {
  const publish: NatsGrant[] = [];
  const subscribe: NatsGrant[] = [];
  for (const entry of REQUEST_CALLERS) {
    for (const subject of entry.subjects) {
      const prefixed = prefixedSubject(subjectPrefix, subject);
      if (entry.callers.includes(role)) publish.push({ subject: prefixed, why: entry.why ?? `calls the ${entry.service} service` });
      if (entry.service === role)
        subscribe.push({ subject: prefixedSubject(subjectPrefix, SUBJECTS_ADDRESSED_BY_NAME[subject] ?? subject), why: `answers it (queue group ${role})` });
    }
  }
  return { publish, subscribe };
}

/**
 * What one relay role may publish and subscribe to under a subject prefix. This is the one table
 * of the relay's NATS privileges: the shipped NATS configuration, the credentials command, the docs
 * and the start-up check of every process are made from it.
 */
export function relayNatsPermissions(role: RelayNatsRole, subjectPrefix: string): NatsPermissions {
  const at = (subject: string): string => prefixedSubject(subjectPrefix, subject);
  const events = eventStreamName(subjectPrefix);
  const inboxPrefix = natsInboxPrefix(role, subjectPrefix);
  const { publish, subscribe } = requestGrants(role, subjectPrefix);
  subscribe.push({ subject: `${inboxPrefix}.>`, why: 'its own replies, JetStream acks and consumer deliveries' });
  if (role !== 'edge') publish.push(JETSTREAM_INFO, ...ownStream(events, 'ensures the event stream as it starts'));
  switch (role) {
    case 'edge': {
      const limits = rateLimitStreamName(subjectPrefix);
      const sessions = consoleSessionStreamName(subjectPrefix);
      const keys = `KV_${keyFilterBucketName(subjectPrefix)}`;
      publish.push(
        JETSTREAM_INFO,
        ...ownStream(limits, 'keeps the rate-limit leases'),
        { subject: `$JS.API.STREAM.DELETE.${limits}`, why: 'makes the rate-limit stream again when its settings changed' },
        ...messageGets(limits, 'reads an agent’s lease count'),
        { subject: at(`${RATE_LIMIT_SUBJECT_ROOT}.>`), why: 'leases calls (compare-and-set publish)' },
        ...ownStream(sessions, 'keeps console sessions'),
        { subject: `$JS.API.STREAM.PURGE.${sessions}`, why: 'signs a console session out' },
        ...messageGets(sessions, 'reads a console session'),
        { subject: at(`${CONSOLE_SESSION_SUBJECT_ROOT}.>`), why: 'stores a console session' },
        { subject: `$JS.API.STREAM.INFO.${keys}`, why: 'opens the key filter bucket' },
        ...streamReader(keys, 'watches the key filter bucket'),
      );
      subscribe.push(
        { subject: at(`${TASK_EVENT_SUBJECT_PREFIX}.>`), why: 'wakes blocking sends and feeds streams' },
        { subject: at(DIRECTORY_CHANGES_SUBJECT), why: 'drops cached directory answers' },
      );
      break;
    }
    case 'tasks':
      publish.push(
        { subject: at(`${TASK_EVENT_SUBJECT_PREFIX}.>`), why: 'publishes task events from its outbox' },
        { subject: at('relay.events.push_config.>'), why: 'publishes push-config events from its outbox' },
      );
      subscribe.push({ subject: at(DIRECTORY_CHANGES_SUBJECT), why: 'drops the upstream agents it keeps from the directory' });
      break;
    case 'directory': {
      const bucket = keyFilterBucketName(subjectPrefix);
      publish.push(
        { subject: at(AGENT_UPDATED_EVENT_SUBJECT), why: 'publishes agent events from its outbox' },
        { subject: at(DIRECTORY_CHANGES_SUBJECT), why: 'tells edges to drop cached directory answers' },
        ...ownStream(`KV_${bucket}`, 'keeps the key filter bucket'),
        { subject: `$KV.${bucket}.>`, why: 'puts and deletes key filter entries' },
        ...messageGets(`KV_${bucket}`, 'reads key filter entries'),
        ...streamReader(`KV_${bucket}`, 'lists the key filter bucket to reconcile it'),
      );
      break;
    }
    case 'notifier':
      publish.push(
        ...streamReader(events, 'consumes events (durable consumer notifier) and follows targets (ordered consumers)'),
        ...messageGets(events, 'reads how far its targets feed must read'),
      );
      break;
  }
  return { holder: role, inboxPrefix, publish, subscribe, allowResponses: role !== 'edge' };
}

/**
 * An internal service that follows the relay's events: it reads the event stream through its own
 * durable pull consumer (named `name`, made for it by the notifier on request) and nothing else. It
 * sits in a NATS account of its own that imports from the relay's account exactly the subjects of
 * `account.imports`; its permissions list their subjects in its account. So it cannot publish any
 * `relay.*` subject of the relay, see any request or reply, touch another stream or consumer, or read
 * console sessions or the key filter, and no reply subject it names (of a request, a pull, an ack)
 * is a subject of the relay's account.
 */
export function eventConsumerPermissions(name: string, subjectPrefix: string): NatsPermissions {
  const events = eventStreamName(subjectPrefix);
  const holder = `consumer ${name}`;
  const inboxPrefix = natsInboxPrefix(`consumer_${name}`, subjectPrefix);
  const api = (subject: string): Pick<NatsImport, 'subject' | 'localSubject'> => ({
    subject: `$JS.API.${subject}`,
    localSubject: `${EVENT_CONSUMER_JS_API_PREFIX}.${subject}`,
  });
  const ensure = prefixedSubject(subjectPrefix, eventConsumerEnsureSubject(name));
  const imports: NatsImport[] = [
    { subject: ensure, localSubject: ensure, responseType: 'singleton', why: `asks the notifier for its durable consumer ${name}` },
    { ...api(`STREAM.INFO.${events}`), responseType: 'singleton', why: `reads the event stream’s state (${RELAY_EVENTS_SUBJECT_ROOT}.>)` },
    { ...api(`CONSUMER.INFO.${events}.${name}`), responseType: 'singleton', why: `reads its durable consumer ${name}` },
    { ...api(`CONSUMER.MSG.NEXT.${events}.${name}`), responseType: 'stream', why: `pulls events from its durable consumer ${name}` },
    {
      subject: `$JS.ACK.${events}.${name}.>`,
      localSubject: `$JS.ACK.${events}.${name}.>`,
      responseType: 'stream',
      why: 'acknowledges the events it handled (`+NXT` asks for more)',
    },
  ];
  return {
    holder,
    inboxPrefix,
    publish: imports.map((entry) => ({ subject: entry.localSubject, why: entry.why })),
    subscribe: [{ subject: `${inboxPrefix}.>`, why: 'its own replies and consumer deliveries' }],
    allowResponses: false,
    account: { name: eventConsumerAccountName(name, subjectPrefix), imports },
  };
}

/**
 * The reply subject NATS gives a request that reached this account through a service import: the
 * importing account's reply, mapped so that the answer goes back into that account only.
 */
export const SERVICE_IMPORT_REPLY_PREFIX = '_R_.';

/**
 * Where a request that a holder outside the relay may publish can be answered: the caller's own
 * inbox, or the reply NATS made for its account's service import. NATS does not check the reply
 * subject of a publish, and a service answers wherever it points, so a service checks it before it
 * answers: a reply elsewhere (an event subject, a rate-limit key, another service's request subject)
 * would be a publish made with the service's rights. Undefined for subjects only relay processes call.
 */
export function permittedReplyPrefixes(subject: string, subjectPrefix: string): string[] | undefined {
  if (!subjectMatches(prefixedSubject(subjectPrefix, SUBJECTS_ADDRESSED_BY_NAME[EVENT_CONSUMER_SUBJECTS.ensure]), subject)) return undefined;
  const name = subject.split('.').at(-2) ?? '';
  return [`${natsInboxPrefix(`consumer_${name}`, subjectPrefix)}.`, SERVICE_IMPORT_REPLY_PREFIX];
}

/**
 * Where any other request may be answered: an inbox (NATS clients make their replies under `_INBOX`,
 * the relay's processes under their own `_INBOX_<holder>`), or an import's reply. No stream captures
 * these and no service answers them, so a holder of a relay credential cannot aim a service's answer
 * at an event subject, a rate-limit key or another request subject either.
 */
const INBOX_REPLY_PREFIXES = ['_INBOX', SERVICE_IMPORT_REPLY_PREFIX];

/** Whether a request on `subject` may be answered on `reply` (one of the relay's own without a reply is answered nowhere). */
export function isPermittedReply(subject: string, reply: string | undefined, subjectPrefix: string): boolean {
  const outsiders = permittedReplyPrefixes(subject, subjectPrefix);
  if (reply === undefined) return outsiders === undefined;
  return (outsiders ?? INBOX_REPLY_PREFIXES).some((prefix) => reply.startsWith(prefix) && reply.length > prefix.length);
}

/** The subjects a NATS wildcard pattern matches, tested token by token (`*` one token, `>` the rest). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const wanted = pattern.split('.');
  const given = subject.split('.');
  for (let index = 0; index < wanted.length; index++) {
    if (wanted[index] === '>') return given.length > index;
    if (index >= given.length) return false;
    if (wanted[index] !== '*' && wanted[index] !== given[index]) return false;
  }
  return wanted.length === given.length;
}
