import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { AdminTaskRow } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { intentLabel } from '../../components/intent-label';
import { TimeStamp } from '../../components/time-stamp';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { ToolPromptsSection } from './tool-prompts-section';

function QueueTable({ rows }: { rows: AdminTaskRow[] }) {
  return (
    <table className="table">
      <caption>Handoffs held for approval, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Held since</th>
          <th scope="col">Sender → recipient</th>
          <th scope="col">Intent</th>
          <th scope="col">Rule</th>
          <th scope="col">Expires</th>
          <th scope="col">Summary</th>
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
              {row.hold?.rule ?? '—'}
              {row.hold?.four_eyes ? ' (four eyes)' : ''}
            </td>
            <td>{row.hold ? <TimeStamp at={row.hold.expires_at} /> : '—'}</td>
            <td>
              <Link to={`/approvals/${encodeURIComponent(row.id)}`}>{row.summary || row.id}</Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The approvals queue: the handoffs a hold rule of their recipient's trust policy keeps for a
 * person's decision, and the tool prompts a tool-prompt rule gives to people.
 */
export function ApprovalsPage() {
  useDocumentTitle('Approvals');
  const { role, allows } = useRole();
  const queue = useInfiniteQuery({
    queryKey: ['approvals', 'list'],
    queryFn: ({ pageParam }) => adminApi.listApprovals(pageParam || undefined),
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: 15_000,
  });
  const rows = queue.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Approvals</h1>
      <p className="hint">
        A hold rule of the recipient&apos;s trust policy keeps these handoffs from their recipient until a person approves them (delivered as if just sent) or
        denies them (the sender is told the reason). Unanswered, a hold expires and the handoff is rejected.
      </p>
      {!allows('approver') && (
        <p className="notice" role="note">
          Your role ({role}) may read held handoffs but not decide them: approving and denying need the approver role.
        </p>
      )}
      {queue.isPending && <p role="status">Loading the held handoffs…</p>}
      {queue.isError && <ErrorMessage error={queue.error} />}
      {queue.isSuccess && (rows.length === 0 ? <p>No handoff is waiting for approval.</p> : <QueueTable rows={rows} />)}
      {queue.hasNextPage && (
        <button type="button" className="button secondary" onClick={() => void queue.fetchNextPage()}>
          More held handoffs
        </button>
      )}
      <ToolPromptsSection />
    </>
  );
}
