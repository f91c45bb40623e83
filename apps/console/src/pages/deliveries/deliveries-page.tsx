import type { FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { DeliveryStatus } from '../../api/types';
import { DeliveryTable } from '../../components/delivery-table';
import { ErrorMessage } from '../../components/error-message';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { useRedeliver } from './redeliver-controls';

const SECTION_TITLES: Record<DeliveryStatus, string> = {
  dead: 'Dead letters',
  failed: 'Failing (another attempt is scheduled)',
  pending: 'Pending',
  succeeded: 'Succeeded',
};

function DeliverySection({ status, taskId, redeliver }: { status: DeliveryStatus; taskId: string; redeliver: ReturnType<typeof useRedeliver> }) {
  const deliveries = useQuery({ queryKey: ['deliveries', status, taskId], queryFn: () => adminApi.listDeliveries(status, taskId || undefined) });
  const list = deliveries.data?.deliveries ?? [];
  const { allows, allowsFor } = useRole();
  const canRedeliver = (status === 'dead' || status === 'failed') && allows('operator');
  return (
    <section aria-labelledby={`deliveries-${status}`}>
      <h2 id={`deliveries-${status}`}>{SECTION_TITLES[status]}</h2>
      {deliveries.isPending && <p role="status">Loading…</p>}
      {deliveries.isError && <ErrorMessage error={deliveries.error} />}
      {deliveries.isSuccess && list.length === 0 && <p>None.</p>}
      {list.length > 0 && (
        <>
          {canRedeliver && (
            <button
              type="button"
              className="button"
              disabled={redeliver.busy}
              onClick={() => redeliver.ask({ kind: 'all', status, taskId: taskId || undefined, count: list.length })}
            >
              {status === 'dead' ? 'Redeliver all dead letters' : 'Redeliver all failed deliveries'}
            </button>
          )}
          <DeliveryTable
            deliveries={list}
            caption={`${SECTION_TITLES[status]}, newest first`}
            showTask
            action={
              canRedeliver
                ? (delivery) =>
                    // One delivery is redelivered by an operator of the org of the agent it notifies.
                    allowsFor(delivery.target_handle, 'operator') ? (
                      <button type="button" className="button secondary" disabled={redeliver.busy} onClick={() => redeliver.ask({ kind: 'one', delivery })}>
                        Redeliver {delivery.event} to {delivery.target_handle}
                      </button>
                    ) : null
                : undefined
            }
          />
        </>
      )}
    </section>
  );
}

/** Deliveries: dead letters and failures first, each with its attempts, redelivered one or all. */
export function DeliveriesPage() {
  useDocumentTitle('Deliveries');
  const [searchParams, setSearchParams] = useSearchParams();
  const taskId = searchParams.get('task_id')?.trim() ?? '';
  const showOthers = searchParams.get('all') === 'true';
  const redeliver = useRedeliver();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    const task = String(data.get('task_id') ?? '').trim();
    if (task) next.set('task_id', task);
    if (data.get('all')) next.set('all', 'true');
    setSearchParams(next);
  };
  const statuses: DeliveryStatus[] = showOthers ? ['dead', 'failed', 'pending', 'succeeded'] : ['dead', 'failed'];
  return (
    <>
      <h1>Deliveries</h1>
      <form className="filters" role="search" aria-label="Filter deliveries" onSubmit={submit} key={searchParams.toString()}>
        <div className="field">
          <label htmlFor="deliveries-task">Task id</label>
          <input id="deliveries-task" name="task_id" defaultValue={taskId} autoComplete="off" />
        </div>
        <label className="check">
          <input type="checkbox" name="all" value="true" defaultChecked={showOthers} />
          Show pending and succeeded deliveries too
        </label>
        <div className="actions">
          <button type="submit" className="button">
            Apply filters
          </button>
        </div>
      </form>
      {redeliver.view}
      {statuses.map((status) => (
        <DeliverySection key={status} status={status} taskId={taskId} redeliver={redeliver} />
      ))}
    </>
  );
}
