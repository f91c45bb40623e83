import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import {
  agentUpdatedEventSchema,
  eventJsonSchema,
  eventKindOfSubject,
  eventKindOfType,
  pushConfigEventSchema,
  RELAY_EVENT_KINDS,
  TASK_EVENT_TYPES,
  taskEventSchema,
  taskEventSchemaOf,
  taskEventSubject,
  type TaskEvent,
} from '@app/contracts';

function validator(schema: Record<string, unknown>) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe('the one description of the event payloads', () => {
  it('has a kind per task event type, push-config change and agent update, each with its subject and CloudEvents type', () => {
    expect(RELAY_EVENT_KINDS.map((kind) => kind.cloudEventType)).toEqual([
      ...TASK_EVENT_TYPES.map((type) => `dev.agentrelay.task.${type}.v1`),
      'dev.agentrelay.push_config.set.v1',
      'dev.agentrelay.push_config.deleted.v1',
      'dev.agentrelay.agent.updated.v1',
    ]);
    for (const type of TASK_EVENT_TYPES) expect(eventKindOfSubject(taskEventSubject(type))?.name).toBe(`task.${type}`);
    expect(eventKindOfType('dev.agentrelay.agent.updated.v1')?.subject).toBe('relay.events.agent.updated');
  });

  it.each(RELAY_EVENT_KINDS.map((kind) => [kind.name, kind] as const))(
    '%s: its example is valid for the zod schema and the generated JSON Schema',
    (_name, kind) => {
      expect(kind.schema.safeParse(kind.example).success).toBe(true);
      const validate = validator(eventJsonSchema(kind));
      expect(validate(kind.example)).toBe(true);
      // Readers ignore fields they do not know: a field added within the version stays valid.
      expect(validate({ ...(kind.example as object), added_later: 1 })).toBe(true);
      const { event_id: _id, ...withoutId } = kind.example as Record<string, unknown>;
      expect(validate(withoutId)).toBe(false);
    },
  );

  it('fixes the type (and the state where the type implies one) per task event type', () => {
    const completed = RELAY_EVENT_KINDS.find((kind) => kind.name === 'task.completed')!;
    const example = completed.example as Record<string, unknown>;
    const validate = validator(eventJsonSchema(completed));
    expect(validate({ ...example, type: 'failed' })).toBe(false);
    expect(validate({ ...example, state: 'failed' })).toBe(false);
    expect(taskEventSchemaOf('message_appended').safeParse({ ...example, type: 'message_appended', state: 'accepted' }).success).toBe(true);
    expect(taskEventSchemaOf('artifact_updated').safeParse({ ...example, type: 'artifact_updated', state: 'accepted' }).success).toBe(false);
  });

  it('accepts events written before optional fields existed (no parts on a message, no webhook_timeout_ms)', () => {
    const created = RELAY_EVENT_KINDS.find((kind) => kind.name === 'task.created')!.example as TaskEvent;
    const { parts: _parts, ...oldMessage } = created.task.latest_message!;
    expect(taskEventSchema.safeParse({ ...created, task: { ...created.task, latest_message: oldMessage } }).success).toBe(true);
    const agent = RELAY_EVENT_KINDS.find((kind) => kind.name === 'agent.updated')!.example as Record<string, unknown>;
    const { webhook_timeout_ms: _timeout, ...oldAgent } = agent;
    expect(agentUpdatedEventSchema.safeParse(oldAgent).success).toBe(true);
    expect(pushConfigEventSchema.safeParse({ ...agent }).success).toBe(false);
  });
});
