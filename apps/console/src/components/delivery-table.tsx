import { useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../api/admin-api';
import type { DeliveryView } from '../api/types';
import { ErrorMessage } from './error-message';
import { TimeStamp } from './time-stamp';

function AttemptLog({ id }: { id: string }) {
  const detail = useQuery({ queryKey: ['delivery', id], queryFn: () => adminApi.getDelivery(id) });
  if (detail.isPending) return <p role="status">Loading attempts…</p>;
  if (detail.isError) return <ErrorMessage error={detail.error} />;
  if (detail.data.attempt_log.length === 0) return <p>No attempt yet.</p>;
  return (
    <table className="table nested">
      <caption>Attempts of delivery {id}</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">At</th>
          <th scope="col">HTTP status</th>
          <th scope="col">Error</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        {detail.data.attempt_log.map((attempt) => (
          <tr key={attempt.attempt_no}>
            <td>{attempt.attempt_no}</td>
            <td>
              <TimeStamp at={attempt.attempted_at} />
            </td>
            <td>{attempt.status_code ?? '—'}</td>
            <td>{attempt.error ?? '—'}</td>
            <td>{attempt.duration_ms === null ? 'unknown' : `${attempt.duration_ms} ms`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DeliveryRow({ delivery, showTask, action }: { delivery: DeliveryView; showTask: boolean; action?: (delivery: DeliveryView) => ReactNode }) {
  const [open, setOpen] = useState(false);
  const columns = 7 + (showTask ? 1 : 0) + (action ? 1 : 0);
  return (
    <>
      <tr>
        <td>
          <span className={`badge delivery-${delivery.status}`}>{delivery.status}</span>
        </td>
        <td>{delivery.event}</td>
        {showTask && (
          <td>
            <Link to={`/handoffs/${encodeURIComponent(delivery.task_id)}`}>{delivery.task_id}</Link>
          </td>
        )}
        <td>
          {delivery.channel} to {delivery.target_handle} ({delivery.target_host})
        </td>
        <td>{delivery.attempts}</td>
        <td>{delivery.last_status_code ?? '—'}</td>
        <td>{delivery.last_error ?? '—'}</td>
        <td>
          <TimeStamp at={delivery.created_at} />
        </td>
        {action && <td>{action(delivery)}</td>}
      </tr>
      <tr className="attempts-row">
        <td colSpan={columns}>
          <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide attempts' : 'Show attempts'} of {delivery.event} to {delivery.target_handle}
          </button>
          {open && <AttemptLog id={delivery.id} />}
        </td>
      </tr>
    </>
  );
}

/** Deliveries with their outcome; each one opens onto its attempts. */
export function DeliveryTable({
  deliveries,
  caption,
  showTask = false,
  action,
}: {
  deliveries: DeliveryView[];
  caption: string;
  showTask?: boolean;
  action?: (delivery: DeliveryView) => ReactNode;
}) {
  return (
    <table className="table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Event</th>
          {showTask && <th scope="col">Task</th>}
          <th scope="col">Target</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last HTTP status</th>
          <th scope="col">Last error</th>
          <th scope="col">Created</th>
          {action && <th scope="col">Action</th>}
        </tr>
      </thead>
      <tbody>
        {deliveries.map((delivery) => (
          <DeliveryRow key={delivery.id} delivery={delivery} showTask={showTask} action={action} />
        ))}
      </tbody>
    </table>
  );
}
