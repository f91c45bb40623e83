import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { UpstreamChangeDecision, UpstreamInterface, UpstreamPendingChange, UpstreamRefreshReply, UpstreamStatusView } from '../../api/types';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { UpstreamHealthDot } from '../../components/upstream-health-dot';
import { BINDING_LABELS, BREAKER_LABELS, changeValueText } from '../../lib/upstream-view';
import { useRole } from '../../session/session-context';

const yesNo = (value: boolean): string => (value ? 'Yes' : 'No');

function authLabel(upstream: UpstreamInterface): string {
  switch (upstream.auth_scheme) {
    case 'none':
      return 'None';
    case 'api_key':
      return `API key in the ${upstream.auth_header ?? 'X-API-Key'} header`;
    case 'bearer':
      return 'Bearer token';
    case 'oauth2':
      return 'OAuth2 client credentials (bearer tokens)';
  }
}

function refreshOutcomeText({ refresh }: UpstreamRefreshReply): string {
  switch (refresh.outcome) {
    case 'unchanged':
      return 'Card read: nothing changed.';
    case 'applied':
      return `Card read: ${refresh.changes.map((change) => change.field).join(', ')} took effect at once.`;
    case 'pending':
      return 'Card read: it changed how the relay reaches the agent; the change waits for a decision (Card change pending, above).';
    case 'rejected_before':
      return 'Card read: it shows the change rejected before, so it is not proposed again.';
    case 'failed':
      return `The card could not be used: ${refresh.error ?? 'no reason given'}. The accepted card stays.`;
  }
}

/** What the refresh, accept and reject answers carry beyond the status. */
function statusOf(reply: UpstreamStatusView): UpstreamStatusView {
  const { handle, upstream, card, tls, health } = reply;
  return { handle, upstream, card, tls, health };
}

function useStatusUpdate(handle: string): (reply: UpstreamStatusView) => void {
  const queryClient = useQueryClient();
  return (reply) => {
    queryClient.setQueryData(['upstream', handle], statusOf(reply));
    void queryClient.invalidateQueries({ queryKey: ['agent', handle] });
    void queryClient.invalidateQueries({ queryKey: ['agents'] });
  };
}

function RefreshCardButton({ handle }: { handle: string }) {
  const update = useStatusUpdate(handle);
  const refresh = useMutation({ mutationFn: () => adminApi.refreshUpstream(handle), onSuccess: update });
  return (
    <div className="actions">
      <button type="button" className="button secondary" disabled={refresh.isPending} onClick={() => refresh.mutate()}>
        Refresh card
      </button>
      {refresh.isSuccess && (
        <p role="status" data-testid="refresh-outcome">
          {refreshOutcomeText(refresh.data)}
        </p>
      )}
      {refresh.isError && <ErrorMessage error={refresh.error} />}
    </div>
  );
}

const DECISION_QUESTIONS: Record<UpstreamChangeDecision, { title: string; label: string; body: string }> = {
  accept: {
    title: 'Accept the card change?',
    label: 'Accept change',
    body: 'From now on every delivery, poll and stream to this agent uses the new values.',
  },
  reject: {
    title: 'Reject the card change?',
    label: 'Reject change',
    body: 'The accepted card stays; the same change read again is not proposed again.',
  },
};

function PendingChangePanel({ handle, change, mayDecide }: { handle: string; change: UpstreamPendingChange; mayDecide: boolean }) {
  const update = useStatusUpdate(handle);
  const [asking, setAsking] = useState<UpstreamChangeDecision | null>(null);
  const decide = useMutation({
    mutationFn: (decision: UpstreamChangeDecision) => adminApi.decideUpstreamChange(handle, decision),
    onSuccess: update,
    onSettled: () => setAsking(null),
  });
  const question = asking ? DECISION_QUESTIONS[asking] : null;
  return (
    <section className="notice pending-change" aria-labelledby="pending-change-title">
      <h3 id="pending-change-title">Card change pending</h3>
      <p>
        The card read <TimeStamp at={change.card_fetched_at} /> (first seen <TimeStamp at={change.detected_at} />) changes how the relay reaches {handle}.
        Deliveries go on against the accepted card until an operator decides.
      </p>
      <table className="table compact">
        <caption>Changed fields</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Accepted</th>
            <th scope="col">On the card now</th>
          </tr>
        </thead>
        <tbody>
          {change.changes.map((entry) => (
            <tr key={entry.field}>
              <th scope="row">{entry.field}</th>
              <td>
                <code>{changeValueText(entry.old)}</code>
              </td>
              <td>
                → <code>{changeValueText(entry.new)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {mayDecide ? (
        <div className="actions">
          <button type="button" className="button" onClick={() => setAsking('accept')}>
            Accept
          </button>
          <button type="button" className="button danger" onClick={() => setAsking('reject')}>
            Reject
          </button>
        </div>
      ) : (
        <p className="hint">An operator decides card changes.</p>
      )}
      {decide.isError && <ErrorMessage error={decide.error} />}
      <ConfirmDialog
        open={question !== null}
        title={question?.title ?? ''}
        confirmLabel={question?.label ?? ''}
        onCancel={() => setAsking(null)}
        onConfirm={() => asking && decide.mutate(asking)}
      >
        {question?.body}
      </ConfirmDialog>
    </section>
  );
}

function DecidedNote({ status }: { status: UpstreamStatusView }) {
  return status.card.pending_change ? null : <p className="hint">No card change waits for a decision.</p>;
}

/** An upstream agent's A2A server: the accepted card, its mTLS identity, its health, and a pending card change to decide. */
export function UpstreamSection({ handle }: { handle: string }) {
  const { allowsFor } = useRole();
  const status = useQuery({ queryKey: ['upstream', handle], queryFn: () => adminApi.getUpstream(handle) });
  const mayAct = allowsFor(handle, 'operator');
  return (
    <section aria-labelledby="upstream-title" className="card upstream-section">
      <h2 id="upstream-title">Upstream A2A server</h2>
      {status.isPending && <p role="status">Loading the upstream server…</p>}
      {status.isError && <ErrorMessage error={status.error} />}
      {status.isSuccess && (
        <>
          {status.data.card.pending_change && <PendingChangePanel handle={handle} change={status.data.card.pending_change} mayDecide={mayAct} />}
          <dl className="field-list" aria-label="Accepted card">
            <dt>Card URL</dt>
            <dd>
              <code>{status.data.upstream.card_url}</code>
            </dd>
            <dt>Interface URL</dt>
            <dd>
              <code>{status.data.upstream.url}</code>
            </dd>
            <dt>Binding</dt>
            <dd>{BINDING_LABELS[status.data.upstream.binding]}</dd>
            <dt>Protocol version</dt>
            <dd>{status.data.upstream.protocol_version}</dd>
            <dt>Streaming</dt>
            <dd>{yesNo(status.data.upstream.streaming)}</dd>
            <dt>Push notifications</dt>
            <dd>{yesNo(status.data.upstream.push_notifications)}</dd>
            <dt>Authentication</dt>
            <dd>{authLabel(status.data.upstream)}</dd>
            <dt>Client certificate (mTLS)</dt>
            <dd>
              {status.data.tls ? (
                <>
                  <code>{status.data.tls.client_cert_subject}</code>, expires <TimeStamp at={status.data.tls.client_cert_not_after} />
                  {status.data.tls.ca && ', with its own CA'}
                </>
              ) : (
                'None'
              )}
            </dd>
            <dt>Last card read</dt>
            <dd>
              {status.data.card.last_refresh_at ? <TimeStamp at={status.data.card.last_refresh_at} /> : <TimeStamp at={status.data.upstream.card_fetched_at} />}
              {status.data.card.last_refresh_error && <> (could not be used: {status.data.card.last_refresh_error})</>}
            </dd>
          </dl>
          <h3>Health</h3>
          <dl className="field-list" aria-label="Health">
            <dt>Status</dt>
            <dd>
              <UpstreamHealthDot status={status.data} />
            </dd>
            <dt>Last success</dt>
            <dd>{status.data.health.last_success_at ? <TimeStamp at={status.data.health.last_success_at} /> : 'None yet'}</dd>
            <dt>Last failure</dt>
            <dd data-testid="upstream-last-failure">
              {status.data.health.last_failure_at ? (
                <>
                  <TimeStamp at={status.data.health.last_failure_at} /> in {status.data.health.last_failure_method ?? 'a request'}:{' '}
                  {status.data.health.last_failure_reason}
                </>
              ) : (
                'None'
              )}
            </dd>
            <dt>Circuit breaker</dt>
            <dd>{BREAKER_LABELS[status.data.health.breaker]}</dd>
          </dl>
          <DecidedNote status={status.data} />
          {mayAct && <RefreshCardButton handle={handle} />}
        </>
      )}
    </section>
  );
}
