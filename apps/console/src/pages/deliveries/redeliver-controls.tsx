import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { DeliveryView } from '../../api/types';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';

export type RedeliverRequest = { kind: 'one'; delivery: DeliveryView } | { kind: 'all'; status: 'failed' | 'dead'; taskId?: string; count: number };

function describe(request: RedeliverRequest): string {
  if (request.kind === 'one') return `${request.delivery.event} to ${request.delivery.target_handle}`;
  const what = request.status === 'dead' ? 'dead letters' : 'failed deliveries';
  // The API redelivers every match (up to 1000 a call), which may be more than the page lists.
  return `every one of the ${what}${request.taskId ? ` of task ${request.taskId}` : ''} (${request.count} listed here)`;
}

/** Redelivery, one or all of a filter, each after a confirmation. */
export function useRedeliver() {
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState<RedeliverRequest | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const redeliver = useMutation({
    mutationFn: async (request: RedeliverRequest) => {
      if (request.kind === 'one') {
        await adminApi.redeliver(request.delivery.id);
        return 1;
      }
      return (await adminApi.redeliverAll(request.status, request.taskId)).redelivered;
    },
    onSuccess: (count, request) => {
      setDone(request.kind === 'one' ? `Redelivering ${describe(request)}.` : `Redelivering ${count} ${count === 1 ? 'delivery' : 'deliveries'}.`);
      void queryClient.invalidateQueries({ queryKey: ['deliveries'] });
      void queryClient.invalidateQueries({ queryKey: ['delivery'] });
    },
    onSettled: () => setAsking(null),
  });

  const view = (
    <>
      <p role="status" className="hint">
        {done ?? ''}
      </p>
      {redeliver.isError && <ErrorMessage error={redeliver.error} />}
      <ConfirmDialog
        open={asking !== null}
        title="Redeliver?"
        confirmLabel="Redeliver"
        onCancel={() => setAsking(null)}
        onConfirm={() => asking && redeliver.mutate(asking)}
      >
        {asking ? `Send ${describe(asking)} again, with a fresh retry schedule?` : ''}
      </ConfirmDialog>
    </>
  );
  const ask = (request: RedeliverRequest) => {
    setDone(null);
    setAsking(request);
  };
  return { ask, busy: redeliver.isPending, view };
}
