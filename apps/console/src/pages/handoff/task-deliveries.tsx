import { useQuery } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import { DeliveryTable } from '../../components/delivery-table';
import { ErrorMessage } from '../../components/error-message';

/** The notifier's deliveries of this task's events. */
export function TaskDeliveries({ taskId }: { taskId: string }) {
  const deliveries = useQuery({ queryKey: ['deliveries', 'task', taskId], queryFn: () => adminApi.deliveriesOfTask(taskId) });
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      {deliveries.isPending && <p role="status">Loading deliveries…</p>}
      {deliveries.isError && <ErrorMessage error={deliveries.error} />}
      {deliveries.isSuccess &&
        (deliveries.data.deliveries.length === 0 ? (
          <p>No deliveries for this handoff.</p>
        ) : (
          <DeliveryTable deliveries={deliveries.data.deliveries} caption="Deliveries of this handoff's events" />
        ))}
    </section>
  );
}
