import { JetStreamApiError } from '@nats-io/jetstream';
import { errors } from '@nats-io/transport-node';
import { RelayError } from '@app/contracts';
import { loadConfig } from '@app/config';
import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { NotifierConfig } from '../notifier.config';
import { EventConsumersService } from './event-consumers.service';

const SUBJECT = 'relay.notifier.v1.event_consumers.ledger.ensure';

/** The service with its JetStream manager's consumer calls answering as `info` does. */
function serviceWhoseJetStream(info: () => Promise<unknown>): EventConsumersService {
  const config = loadConfig(NotifierConfig, {
    RELAY_SECRET_KEYS: 'test:dGVzdC1zZWNyZXQta2V5LTAxMjM0NTY3ODlhYmNkZWY=',
    RELAY_NOTIFIER_SEALING_KEYS: generateNotifierSealingKeyPair('test').sealingKey,
    RELAY_ASSERTION_SIGNING_KEY: generateAssertionKeyPair('test').signingKey,
  });
  const service = new EventConsumersService(config);
  const consumers = { info, add: () => Promise.reject(new Error('not reached')), update: info, delete: info };
  Object.assign(service, { context: Promise.resolve({ jsm: { consumers } }) });
  return service;
}

async function reasonOf(promise: Promise<unknown>): Promise<unknown> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return error instanceof RelayError ? error.reason : error;
}

describe('EventConsumersService: JetStream not answering', () => {
  it('is service_unavailable (the consumer asks again) when JetStream times out, has no responders or answers 503', async () => {
    const away = [
      new errors.TimeoutError(),
      new errors.NoRespondersError('$JS.API.CONSUMER.INFO.relay_events.ledger'),
      new errors.RequestError('timeout', { cause: new errors.TimeoutError() }),
      new errors.ClosedConnectionError(),
      new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' }),
    ];
    for (const error of away)
      expect(await reasonOf(serviceWhoseJetStream(() => Promise.reject(error)).ensure(SUBJECT, { start: 'new' }))).toBe('service_unavailable');
  });

  it('passes on what JetStream refused (not a reason to ask again)', async () => {
    const refused = new JetStreamApiError({ code: 400, err_code: 10012, description: 'insufficient resources' });
    expect(await reasonOf(serviceWhoseJetStream(() => Promise.reject(refused)).ensure(SUBJECT, { start: 'new' }))).toBe(refused);
  });

  it('still refuses a bad request before asking JetStream', async () => {
    let asked = 0;
    const service = serviceWhoseJetStream(() => Promise.resolve({ asked: ++asked }));
    expect(await reasonOf(service.ensure(SUBJECT, { start: 'time', start_time: 'yesterday' }))).toBe('invalid_params');
    expect(asked).toBe(0);
  });
});
