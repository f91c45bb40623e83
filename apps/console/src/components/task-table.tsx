import { Link } from 'react-router';
import type { AdminTaskRow } from '../api/types';
import { intentLabel } from './intent-label';
import { StateBadge } from './state-badge';
import { TimeStamp } from './time-stamp';

/** Tasks, one row each: when, who to whom, what kind, which state, and a link to the thread. */
export function TaskTable({ rows, caption }: { rows: AdminTaskRow[]; caption: string }) {
  return (
    <table className="table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Created</th>
          <th scope="col">Sender → recipient</th>
          <th scope="col">Intent</th>
          <th scope="col">State</th>
          <th scope="col">Summary</th>
          <th scope="col">Messages</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <td>
              <TimeStamp at={row.created_at} />
            </td>
            <td>
              {row.sender.handle} → {row.recipient.handle}
            </td>
            <td>{intentLabel(row.intent)}</td>
            <td>
              <StateBadge state={row.state} />
            </td>
            <td>
              <Link to={`/handoffs/${encodeURIComponent(row.id)}`}>{row.summary || row.id}</Link>
            </td>
            <td>{row.message_count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
