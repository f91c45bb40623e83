import { useCallback } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import type { LiveTaskEvent, TaskChainView } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { chainMayChange } from '../../lib/chain-tree';
import { heldByText, heldPartiesOf } from '../../lib/hold-view';
import { HoldFacts } from '../approvals/hold-facts';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useLiveTaskEvents } from '../live/use-live-task-events';
import { AuditTable } from './audit-table';
import { ChainView } from './chain-view';
import { HandoffHeader } from './handoff-header';
import { TaskArtifacts } from './task-artifacts';
import { TaskDeliveries } from './task-deliveries';
import { Timeline } from './timeline';
import { ToolPromptAnswers } from './tool-prompt-answers';

/** One handoff: its header, its chain, the timeline of every event, its deliveries and its audit rows. */
export function HandoffPage() {
  const { id = '' } = useParams();
  const queryClient = useQueryClient();
  const detail = useQuery({ queryKey: ['task', id], queryFn: () => adminApi.getTask(id) });
  const upstreamCalls = useQuery({ queryKey: ['upstream-calls', id], queryFn: () => adminApi.upstreamCalls(id) });
  useDocumentTitle(detail.data ? `Handoff: ${detail.data.task.summary || id}` : 'Handoff');

  const onEvent = useCallback(
    (event: LiveTaskEvent) => {
      if (chainMayChange(queryClient.getQueryData<TaskChainView>(['chain', id]), event)) void queryClient.invalidateQueries({ queryKey: ['chain', id] });
      if (event.task_id !== id) return;
      void queryClient.invalidateQueries({ queryKey: ['task', id] });
      void queryClient.invalidateQueries({ queryKey: ['deliveries', 'task', id] });
      void queryClient.invalidateQueries({ queryKey: ['upstream-calls', id] });
    },
    [id, queryClient],
  );
  useLiveTaskEvents(onEvent);

  if (detail.isPending) return <p role="status">Loading the handoff…</p>;
  if (detail.isError) {
    if (detail.error instanceof ApiError && detail.error.status === 404) {
      return (
        <>
          <h1>Handoff not found</h1>
          <p>
            No handoff has the id <code>{id}</code>. <Link to="/handoffs">Back to the live handoffs</Link>
          </p>
        </>
      );
    }
    return (
      <>
        <h1>Handoff</h1>
        <ErrorMessage error={detail.error} />
      </>
    );
  }
  const { task, timeline, timeline_truncated, audit, bodies_hidden } = detail.data;
  const held = heldPartiesOf(task);
  return (
    <article className="handoff" aria-label={`Handoff ${task.summary || task.id}`}>
      <HandoffHeader task={task} />
      {task.state === 'held' && held && (
        <p className="notice" role="note" data-testid="held-notice">
          Waiting for a person&apos;s approval. {heldByText(held)} <Link to={`/approvals/${encodeURIComponent(task.id)}`}>Decide it in the approvals</Link>.
        </p>
      )}
      {bodies_hidden && (
        <p className="notice" role="note">
          Your role (auditor) sees who, when and what state, not what the agents wrote: message text and artifacts&apos; content are hidden.
        </p>
      )}
      {held && task.state !== 'held' && <HoldFacts held={held} audit={audit} />}
      <ChainView taskId={task.id} />
      {task.tool_prompts && <ToolPromptAnswers toolPrompts={task.tool_prompts} recipient={task.recipient.handle} />}
      <TaskArtifacts artifacts={task.artifacts} />
      <Timeline entries={timeline} truncated={timeline_truncated} calls={upstreamCalls.data ?? []} held={held} />
      <TaskDeliveries taskId={task.id} />
      <AuditTable rows={audit} />
    </article>
  );
}
