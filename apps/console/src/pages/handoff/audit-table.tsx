import type { AuditRow } from '../../api/types';
import { stateLabel } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';
import { actorText } from '../../lib/hold-view';

/** The task's audit rows: every transition, who made it and between which states. */
export function AuditTable({ rows }: { rows: AuditRow[] }) {
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit</h2>
      {rows.length === 0 ? (
        <p>No audit rows.</p>
      ) : (
        <table className="table">
          <caption>Audit rows, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">At</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={index}>
                <td>
                  <TimeStamp at={row.at} />
                </td>
                <td>{actorText(row.actor)}</td>
                <td>{row.action}</td>
                <td>{row.from_state ? stateLabel(row.from_state) : '—'}</td>
                <td>{row.to_state ? stateLabel(row.to_state) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
