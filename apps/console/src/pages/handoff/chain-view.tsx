import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { AdminChainRefusal } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { StateBadge } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';
import { chainTree, refusalLimitText, refusalReasonText, type ChainTreeNode } from '../../lib/chain-tree';

/** One handoff of the chain and, nested below it, the handoffs made for it. */
function ChainBranch({ node, currentId }: { node: ChainTreeNode; currentId: string }) {
  const { task, children } = node;
  const current = task.id === currentId;
  const name = task.summary || task.id;
  return (
    <li>
      <div className={current ? 'chain-node chain-current' : 'chain-node'}>
        <Link to={`/handoffs/${encodeURIComponent(task.id)}`} aria-current={current ? 'page' : undefined}>
          {name}
        </Link>
        {current && <span className="chain-here"> (this handoff)</span>}
        <span className="chain-facts">
          {' '}
          {task.sender.handle} → {task.recipient.handle} · depth {task.chain?.depth ?? 0} · <StateBadge state={task.state} />
        </span>
      </div>
      {children.length > 0 && (
        <ul aria-label={`Handoffs made for ${name}`}>
          {children.map((child) => (
            <ChainBranch key={child.task.id} node={child} currentId={currentId} />
          ))}
        </ul>
      )}
    </li>
  );
}

function RefusalsTable({ refusals, truncated }: { refusals: AdminChainRefusal[]; truncated: boolean }) {
  if (refusals.length === 0) return <p>The chain&apos;s bounds refused no handoff of it.</p>;
  return (
    <>
      <p>
        {truncated
          ? `The newest ${refusals.length} handoffs the chain's bounds refused (it has more), newest first.`
          : "The handoffs the chain's bounds refused, newest first."}
      </p>
      <table className="table" aria-labelledby="chain-refusals-title">
        <thead>
          <tr>
            <th scope="col">At</th>
            <th scope="col">Why</th>
            <th scope="col">Sender → recipient</th>
            <th scope="col">Bound</th>
            <th scope="col">Path</th>
            <th scope="col">For handoff</th>
          </tr>
        </thead>
        <tbody>
          {refusals.map((refusal) => (
            <tr key={refusal.id}>
              <td>
                <TimeStamp at={refusal.at} />
              </td>
              <td>
                {refusalReasonText(refusal.reason)} (<code>{refusal.reason}</code>)
              </td>
              <td>
                {refusal.sender} → {refusal.recipient ?? '—'}
              </td>
              <td>{refusalLimitText(refusal.limit_name, refusal.limit)}</td>
              <td>{refusal.path.join(' → ')}</td>
              <td>
                {refusal.parent_task_id ? (
                  <Link to={`/handoffs/${encodeURIComponent(refusal.parent_task_id)}`}>
                    <code>{refusal.parent_task_id}</code>
                  </Link>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The handoff's chain as a tree from its root (each handoff linked, with its depth and state, this one marked) and the refusals of the chain's bounds. */
export function ChainView({ taskId }: { taskId: string }) {
  const chain = useQuery({ queryKey: ['chain', taskId], queryFn: () => adminApi.getChain(taskId) });
  return (
    <section aria-labelledby="chain-title">
      <h2 id="chain-title">Chain</h2>
      {chain.isPending && <p role="status">Loading the chain…</p>}
      {chain.isError && <ErrorMessage error={chain.error} />}
      {chain.data && (
        <>
          {chain.data.total === 1 ? (
            <p>This handoff is a chain of its own: it names no handoff it serves, and no handoff was made for it.</p>
          ) : (
            <>
              <p data-testid="chain-summary">
                {chain.data.total} handoffs in this chain.
                {chain.data.nodes_truncated &&
                  ` Shown: ${chain.data.nodes.length}, the path from the root to this handoff, the handoffs made for it and the chain from its root down.`}
              </p>
              <ul className="chain-tree" aria-label="The chain from its root">
                {chainTree(chain.data.nodes).map((node) => (
                  <ChainBranch key={node.task.id} node={node} currentId={chain.data.task_id} />
                ))}
              </ul>
            </>
          )}
          <h3 id="chain-refusals-title">Refused handoffs</h3>
          <RefusalsTable refusals={chain.data.refusals} truncated={chain.data.refusals_truncated} />
        </>
      )}
    </section>
  );
}
