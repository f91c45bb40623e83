import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { applyStreamEvent, NOTHING_REPORTED, planReport, reportBoundsProblem, taskOfMessage } from './sdk-mapping';

function agentMessage(id: string, text: string): Message {
  return {
    messageId: id,
    contextId: 'c',
    taskId: 't',
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function task(state: TaskState, extra: Partial<Task> = {}): Task {
  return { id: 't', contextId: 'c', status: { state, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: undefined, ...extra };
}

const artifact = {
  artifactId: 'a1',
  name: 'out.txt',
  description: '',
  parts: [{ content: { $case: 'text' as const, value: 'OUT' }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
};

describe('planReport', () => {
  it('submitted: nothing to do yet', () => {
    expect(planReport(task(TaskState.TASK_STATE_SUBMITTED), NOTHING_REPORTED).steps).toEqual([]);
  });

  it('completed at once: accept, then complete with the status message and the artifact; nothing again after', () => {
    const done = task(TaskState.TASK_STATE_COMPLETED, { artifacts: [artifact] });
    done.status!.message = agentMessage('m1', 'done it');
    const { steps, next } = planReport(done, NOTHING_REPORTED);
    expect(steps.map((step) => (step.kind === 'transition' ? step.transition : step.kind))).toEqual(['accept', 'complete']);
    expect(steps[1]).toMatchObject({
      message: { message_id: 'm1', parts: [{ kind: 'text', text: 'done it' }] },
      artifacts: [{ artifact_id: 'a1', name: 'out.txt', parts: [{ kind: 'text', text: 'OUT' }] }],
      result_summary: 'done it',
    });
    expect(next.relay_state).toBe('completed');
    expect(planReport(done, next).steps).toEqual([]);
  });

  it('working with progress: accept, the new messages, a changed artifact once', () => {
    const working = task(TaskState.TASK_STATE_WORKING, { history: [agentMessage('m1', 'on it')], artifacts: [artifact] });
    const first = planReport(working, NOTHING_REPORTED);
    expect(first.steps).toEqual([
      { kind: 'transition', transition: 'accept' },
      {
        kind: 'append',
        message: { message_id: 'm1', parts: [{ kind: 'text', text: 'on it', media_type: 'text/plain' }] },
        artifacts: [expect.objectContaining({ artifact_id: 'a1' })],
      },
    ]);
    expect(planReport(working, first.next).steps).toEqual([]);
    const changed = { ...working, artifacts: [{ ...artifact, parts: [{ ...artifact.parts[0], content: { $case: 'text' as const, value: 'MORE' } }] }] };
    expect(planReport(changed, first.next).steps).toEqual([
      { kind: 'transition', transition: 'progress', artifacts: [expect.objectContaining({ artifact_id: 'a1' })] },
    ]);
  });

  it('input-required asks the sender with the status message; failed, rejected and canceled end the relay task', () => {
    const asking = task(TaskState.TASK_STATE_INPUT_REQUIRED);
    asking.status!.message = agentMessage('q1', 'Which branch?');
    expect(planReport(asking, NOTHING_REPORTED).steps.at(-1)).toMatchObject({ transition: 'request_input', message: { message_id: 'q1' } });
    expect(planReport(task(TaskState.TASK_STATE_FAILED), NOTHING_REPORTED).steps.at(-1)).toMatchObject({
      transition: 'fail',
      reason: 'The upstream agent failed the task.',
    });
    expect(planReport(task(TaskState.TASK_STATE_REJECTED), NOTHING_REPORTED).steps).toEqual([
      { kind: 'transition', transition: 'decline', reason: 'The upstream agent rejected the task.' },
    ]);
    expect(planReport(task(TaskState.TASK_STATE_CANCELED), { ...NOTHING_REPORTED, relay_state: 'accepted' }).steps).toEqual([
      { kind: 'transition', transition: 'fail', reason: 'The upstream agent canceled the task.' },
    ]);
  });

  it('the input-required round trip: asked once, a second question asks again, the answer after the sender’s reply completes', () => {
    const asking = task(TaskState.TASK_STATE_INPUT_REQUIRED, { history: [agentMessage('q1', 'Which branch?')] });
    asking.status!.message = agentMessage('q1', 'Which branch?');
    const first = planReport(asking, NOTHING_REPORTED);
    expect(first.steps).toEqual([
      { kind: 'transition', transition: 'accept' },
      { kind: 'transition', transition: 'request_input', message: expect.objectContaining({ message_id: 'q1' }) },
    ]);
    expect(first.next.relay_state).toBe('input_required');
    // Polled again while the sender has not answered: nothing.
    expect(planReport(asking, first.next).steps).toEqual([]);
    // The sender answered (the relay task resumed), the upstream asks a second question.
    const again = task(TaskState.TASK_STATE_INPUT_REQUIRED, { history: [agentMessage('q1', 'Which branch?')] });
    again.status!.message = agentMessage('q2', 'And which commit?');
    const second = planReport(again, first.next);
    expect(second.steps).toEqual([{ kind: 'transition', transition: 'request_input', message: expect.objectContaining({ message_id: 'q2' }) }]);
    // As the SDK's server keeps it: the status message in the history too.
    const done = task(TaskState.TASK_STATE_COMPLETED, {
      history: [agentMessage('q1', 'Which branch?'), agentMessage('q2', 'And which commit?'), agentMessage('a1', 'Merged.')],
    });
    done.status!.message = agentMessage('a1', 'Merged.');
    expect(planReport(done, second.next).steps).toEqual([
      expect.objectContaining({ kind: 'transition', transition: 'complete', message: expect.objectContaining({ message_id: 'a1' }) }),
    ]);
  });

  it('a direct message answer completes the relay task with it', () => {
    const { steps } = planReport(taskOfMessage(agentMessage('m9', 'hi'), 'relay-task'), NOTHING_REPORTED);
    expect(steps.map((step) => (step.kind === 'transition' ? step.transition : step.kind))).toEqual(['accept', 'complete']);
  });
});

describe('applyStreamEvent', () => {
  const chunk = (value: string, append: boolean) => ({
    payload: {
      $case: 'artifactUpdate' as const,
      value: {
        taskId: 't',
        contextId: 'c',
        artifact: { ...artifact, parts: [{ ...artifact.parts[0], content: { $case: 'text' as const, value } }] },
        append,
        lastChunk: !append,
        metadata: undefined,
      },
    },
  });
  const update = (state: TaskState, message?: Message) => ({
    payload: { $case: 'statusUpdate' as const, value: { taskId: 't', contextId: 'c', status: { state, message, timestamp: undefined }, metadata: undefined } },
  });

  it('builds the task from a stream: the task, status updates (the replaced status message kept in the history), artifact chunks appended', () => {
    let snapshot = applyStreamEvent(null, { payload: { $case: 'task', value: task(TaskState.TASK_STATE_SUBMITTED) } }, 'relay');
    snapshot = applyStreamEvent(snapshot, update(TaskState.TASK_STATE_WORKING, agentMessage('m1', 'step 1')), 'relay');
    snapshot = applyStreamEvent(snapshot, chunk('part 1;', false), 'relay');
    snapshot = applyStreamEvent(snapshot, chunk('part 2', true), 'relay');
    snapshot = applyStreamEvent(snapshot, update(TaskState.TASK_STATE_COMPLETED, agentMessage('m2', 'done')), 'relay');
    expect(snapshot?.history.map((message) => message.messageId)).toEqual(['m1']);
    expect(snapshot?.artifacts[0].parts.map((part) => (part.content?.$case === 'text' ? part.content.value : null))).toEqual(['part 1;', 'part 2']);
    const { steps } = planReport(snapshot as Task, NOTHING_REPORTED);
    expect(steps.map((step) => (step.kind === 'transition' ? step.transition : step.kind))).toEqual(['accept', 'append', 'complete']);
  });

  it('an update before any task event starts the task from it; a message is a direct answer', () => {
    expect(applyStreamEvent(null, update(TaskState.TASK_STATE_WORKING), 'relay')).toMatchObject({
      id: 't',
      contextId: 'c',
      status: { state: TaskState.TASK_STATE_WORKING },
    });
    expect(applyStreamEvent(null, { payload: { $case: 'message', value: agentMessage('m9', 'hi') } }, 'relay')).toMatchObject({
      id: 'relay',
      status: { state: TaskState.TASK_STATE_COMPLETED },
    });
  });
});

describe('reportBoundsProblem: the edge’s payload bounds on what an upstream answers', () => {
  const NATS_MAX_PAYLOAD = 1024 * 1024;
  const withData = (data: unknown, metadata?: Record<string, unknown>): Task =>
    task(TaskState.TASK_STATE_COMPLETED, {
      status: {
        state: TaskState.TASK_STATE_COMPLETED,
        timestamp: undefined,
        message: {
          ...agentMessage('m1', 'done'),
          parts: [
            ...agentMessage('m1', 'done').parts,
            { content: { $case: 'data', value: data as { [key: string]: unknown } }, metadata: undefined, filename: '', mediaType: '' },
          ],
          metadata,
        },
      },
    });

  it('names a data part past 256 keys or 16 levels, a metadata object past them, and a message no reply could carry', () => {
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`k${index}`, index]));
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 200; level++) deep = { level: deep };
    const problemOf = (answer: Task) => reportBoundsProblem(planReport(answer, NOTHING_REPORTED).steps, NATS_MAX_PAYLOAD);
    expect(problemOf(withData(wide))).toBe('message.parts[1].data has an object or array with more than 256 keys');
    expect(problemOf(withData(deep))).toBe('message.parts[1].data nests objects and arrays deeper than 16 levels');
    expect(problemOf(withData({ ok: true }, wide))).toBe('message.metadata has an object or array with more than 256 keys');
    const long = task(TaskState.TASK_STATE_COMPLETED, {
      status: {
        state: TaskState.TASK_STATE_COMPLETED,
        timestamp: undefined,
        message: { ...agentMessage('m1', ''), parts: Array.from({ length: 20 }, () => agentMessage('m1', 'x'.repeat(90_000)).parts[0]) },
      },
    });
    expect(problemOf(long)).toMatch(/^a message of \d+ bytes is larger than the relay carries \(983040\)$/);
    expect(problemOf(withData({ ok: true }, { ticket: 'T-1' }))).toBeUndefined();
  });

  it('names an artifact’s data part or metadata past the bounds', () => {
    const wide = Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`k${index}`, index]));
    const answer = task(TaskState.TASK_STATE_WORKING, {
      artifacts: [{ ...artifact, parts: [{ content: { $case: 'data', value: wide }, metadata: undefined, filename: '', mediaType: '' }] }],
    });
    expect(reportBoundsProblem(planReport(answer, NOTHING_REPORTED).steps, NATS_MAX_PAYLOAD)).toBe(
      'artifact a1 parts[0].data has an object or array with more than 256 keys',
    );
  });
});
