import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ErrorMessage } from '../../components/error-message';
import { stateLabel } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';
import { useDocumentTitle } from '../../lib/use-document-title';
import { PerMinuteChart } from './per-minute-chart';

function lagText(ms: number | null): string {
  if (ms === null) return 'nothing waiting';
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The relay at a glance: throughput, open handoffs, the oldest pending one, delivery failures, outbox lag. */
export function OverviewPage() {
  useDocumentTitle('Overview');
  const overview = useQuery({ queryKey: ['overview'], queryFn: () => adminApi.overview(), refetchInterval: 15_000 });
  if (overview.isPending) return <p role="status">Loading the overview…</p>;
  if (overview.isError)
    return (
      <>
        <h1>Overview</h1>
        <ErrorMessage error={overview.error} />
      </>
    );
  const { per_minute, open_by_state, oldest_pending, delivery_failures, outbox_lag } = overview.data;
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="throughput-title">
        <h2 id="throughput-title">Last hour</h2>
        <PerMinuteChart points={per_minute} />
      </section>
      <div className="tiles">
        <section className="card" aria-labelledby="open-title">
          <h2 id="open-title">Open handoffs</h2>
          <dl className="facts">
            {(['pending', 'accepted', 'input_required'] as const).map((state) => (
              <div key={state}>
                <dt>{stateLabel(state)}</dt>
                <dd>
                  <Link to={`/handoffs?state=${state}`}>{open_by_state[state]}</Link>
                </dd>
              </div>
            ))}
          </dl>
        </section>
        <section className="card" aria-labelledby="oldest-title">
          <h2 id="oldest-title">Oldest pending</h2>
          {oldest_pending ? (
            <p>
              <Link to={`/handoffs/${encodeURIComponent(oldest_pending.id)}`}>
                {oldest_pending.sender} → {oldest_pending.recipient}
              </Link>
              , since <TimeStamp at={oldest_pending.created_at} />
            </p>
          ) : (
            <p>No pending handoff.</p>
          )}
        </section>
        <section className="card" aria-labelledby="failures-title">
          <h2 id="failures-title">Delivery failures</h2>
          <dl className="facts">
            <div>
              <dt>Dead letters</dt>
              <dd>{delivery_failures.dead}</dd>
            </div>
            <div>
              <dt>Failing</dt>
              <dd>{delivery_failures.failed}</dd>
            </div>
          </dl>
          <Link to="/deliveries">See the deliveries</Link>
        </section>
        <section className="card" aria-labelledby="outbox-title">
          <h2 id="outbox-title">Outbox lag</h2>
          <dl className="facts">
            <div>
              <dt>Unpublished events</dt>
              <dd>{outbox_lag.unpublished}</dd>
            </div>
            <div>
              <dt>Oldest waiting</dt>
              <dd>{lagText(outbox_lag.oldest_unpublished_ms)}</dd>
            </div>
          </dl>
        </section>
      </div>
    </>
  );
}
