import { z } from 'zod';
import { WIRE_VERSIONS } from '../wire-version';

/** Payload of `relay.events.push_config.set|deleted`: which config changed, without its token or credentials. */
export const pushConfigEventSchema = z
  .object({
    event_id: z.uuid().meta({ description: 'UUID, also the `Nats-Msg-Id` and the CloudEvents `id`.' }),
    task_id: z.string().meta({ description: 'The task the config belongs to; the CloudEvents `subject`.' }),
    config_id: z.string(),
    /** Handle of the participant who registered it. */
    owner: z.string().meta({ description: 'Handle of the participant who registered it.' }),
    version: z.enum(WIRE_VERSIONS).meta({ description: 'The A2A version the config is delivered in.' }),
    url: z.string().nullable().meta({ description: 'Where pushes go; null on a delete.' }),
    deleted: z.boolean(),
    occurred_at: z.iso.datetime().meta({ description: 'ISO-8601 time of the change; the CloudEvents `time`.' }),
  })
  .meta({
    title: 'PushConfigEvent',
    description: 'An A2A push-notification config of a task was set or deleted (never with its token or credentials).',
  });
export type PushConfigEvent = z.infer<typeof pushConfigEventSchema>;
