import { useQuery } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';

/** How often the navigation asks how many handoffs wait (a held handoff writes no live event). */
const HELD_COUNT_REFRESH_MS = 15_000;

/** The held handoffs waiting for a decision: their number (of the first page), and whether more wait. */
export function useHeldCount(enabled: boolean): { count: number; more: boolean } | null {
  const queue = useQuery({
    queryKey: ['approvals', 'queue'],
    queryFn: () => adminApi.listApprovals(),
    enabled,
    refetchInterval: HELD_COUNT_REFRESH_MS,
  });
  if (!queue.data) return null;
  return { count: queue.data.items.length, more: queue.data.next_cursor !== null };
}
