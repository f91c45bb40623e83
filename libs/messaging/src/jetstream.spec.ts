import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import {
  claimEventStream,
  DEFAULT_EVENT_STREAM_MAX_BYTES,
  DeploymentConflictError,
  deploymentDescription,
  ensureEventStream,
  eventStreamName,
  eventStreamSubjects,
  streamDeployment,
} from './jetstream';

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

describe('the deployment that owns the event stream', () => {
  /** A JetStream manager holding at most the one stream, created and updated in place. */
  function fakeManager(existing?: Partial<StreamConfig>): { jsm: JetStreamManager; config: () => Partial<StreamConfig> | undefined } {
    let config = existing ? { name: eventStreamName(''), ...existing } : undefined;
    const info = (): StreamInfo => ({ config }) as StreamInfo;
    const streams = {
      info: () =>
        config
          ? Promise.resolve(info())
          : Promise.reject(new JetStreamApiError({ err_code: JetStreamApiCodes.StreamNotFound, code: 404, description: 'stream not found' })),
      add: (added: Partial<StreamConfig>) => {
        config = { ...added } as typeof config;
        return Promise.resolve(info());
      },
      update: (_name: string, updated: Partial<StreamConfig>) => {
        config = { ...config, ...updated } as typeof config;
        return Promise.resolve(info());
      },
    };
    return { jsm: { streams } as unknown as JetStreamManager, config: () => config };
  }
  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

  it('holds a bounded number of bytes: made with the limit given (or the default), and an unbounded stream of an older relay is bounded at start', async () => {
    const made = fakeManager();
    await ensureEventStream(made.jsm, '');
    expect(made.config()?.max_bytes).toBe(DEFAULT_EVENT_STREAM_MAX_BYTES);
    const configured = fakeManager();
    await claimEventStream(configured.jsm, { subjectPrefix: '', deploymentId: '01JA', maxBytes: 64 * 1024 * 1024 }, quiet);
    expect(configured.config()?.max_bytes).toBe(64 * 1024 * 1024);

    const older = fakeManager({ max_bytes: -1, description: deploymentDescription('01JA') });
    await ensureEventStream(older.jsm, '');
    expect(older.config()?.max_bytes).toBe(-1);
    await claimEventStream(older.jsm, { subjectPrefix: '', deploymentId: '01JA', maxBytes: 32 * 1024 * 1024 }, quiet);
    expect(older.config()?.max_bytes).toBe(32 * 1024 * 1024);
  });

  it('is named in the description of a stream it creates', async () => {
    const nats = fakeManager();
    await claimEventStream(nats.jsm, { subjectPrefix: '', deploymentId: '01JA' }, quiet);
    expect(nats.config()?.description).toBe('agentrelay deployment 01JA');
  });

  it('claims a stream that names none, and keeps its own', async () => {
    const nats = fakeManager({ subjects: ['relay.events.>'] });
    await claimEventStream(nats.jsm, { subjectPrefix: '', deploymentId: '01JA' }, quiet);
    expect(nats.config()).toMatchObject({ description: 'agentrelay deployment 01JA', subjects: ['relay.events.>'] });
    await expect(claimEventStream(nats.jsm, { subjectPrefix: '', deploymentId: '01JA' }, quiet)).resolves.toBeDefined();
  });

  it("refuses another deployment's stream, naming NATS_SUBJECT_PREFIX and both ids", async () => {
    const nats = fakeManager({ description: deploymentDescription('01HA') });
    const refused = claimEventStream(nats.jsm, { subjectPrefix: '', deploymentId: '01JB' }, quiet);
    await expect(refused).rejects.toThrow(DeploymentConflictError);
    await expect(refused).rejects.toThrow(
      'NATS_SUBJECT_PREFIX="" is already served by another AgentRelay deployment (stream RELAY_EVENTS has deployment 01HA, this database has 01JB): ' +
        'give each deployment its own NATS_SUBJECT_PREFIX or its own NATS credentials/account',
    );
    expect(nats.config()?.description).toBe('agentrelay deployment 01HA');
  });

  it('reads no deployment from a description of something else', () => {
    expect(streamDeployment({ config: { description: 'events of the relay' } } as StreamInfo)).toBeUndefined();
    expect(streamDeployment({ config: {} } as StreamInfo)).toBeUndefined();
  });
});
