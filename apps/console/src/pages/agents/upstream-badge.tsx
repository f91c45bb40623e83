import { useQuery } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { AgentRecord } from '../../api/types';
import { UpstreamHealthDot } from '../../components/upstream-health-dot';
import { hostOf } from '../../lib/upstream-view';

/** In the agents list: marks an agent that runs its own A2A server, with its host and health. */
export function UpstreamBadge({ agent }: { agent: AgentRecord }) {
  const upstream = agent.upstream;
  const status = useQuery({
    queryKey: ['upstream', agent.handle],
    queryFn: () => adminApi.getUpstream(agent.handle),
    enabled: Boolean(upstream),
  });
  if (!upstream) return null;
  return (
    <span className="upstream-badge">
      <span className="badge upstream">A2A server</span> <span className="host">{hostOf(upstream.url)}</span>{' '}
      {status.data && <UpstreamHealthDot status={status.data} />}
    </span>
  );
}
