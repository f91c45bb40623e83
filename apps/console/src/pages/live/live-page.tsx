import { useCallback, useEffect, useMemo, useRef } from 'react';
import { useInfiniteQuery, useQueryClient, type InfiniteData } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { LiveTaskEvent, TaskPage } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { TaskFiltersForm } from '../../components/task-filters-form';
import { TaskTable } from '../../components/task-table';
import { applyLiveEvent } from '../../lib/live-rows';
import { filtersFromQuery, filtersToApiQuery, filtersToQuery, matchesFilters } from '../../lib/task-filters';
import { useDocumentTitle } from '../../lib/use-document-title';
import { LiveStatusLine } from './live-status';
import { useLiveTaskEvents } from './use-live-task-events';

const PAGE_SIZE = '50';

/** Every task across all agents, newest first, kept current by the relay's live events. */
export function LivePage() {
  useDocumentTitle('Live handoffs');
  const [searchParams, setSearchParams] = useSearchParams();
  const filters = useMemo(() => filtersFromQuery(searchParams), [searchParams]);
  const apiQuery = filtersToApiQuery(filters).toString();
  const queryKey = useMemo(() => ['tasks', apiQuery], [apiQuery]);
  const queryClient = useQueryClient();

  const tasks = useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams(apiQuery);
      query.set('limit', PAGE_SIZE);
      if (pageParam) query.set('cursor', pageParam);
      return adminApi.listTasks(query);
    },
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });

  // New tasks come from the server (it holds the full row); bursts of them refetch once.
  const refetchTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => clearTimeout(refetchTimer.current ?? undefined), []);
  const onEvent = useCallback(
    (event: LiveTaskEvent) => {
      const data = queryClient.getQueryData<InfiniteData<TaskPage>>(queryKey);
      if (!data) {
        // The first page is on its way and may have been read before this event: read it again.
        void queryClient.invalidateQueries({ queryKey });
        return;
      }
      const { pages, unseenTask } = applyLiveEvent(data.pages, event);
      if (!unseenTask) {
        queryClient.setQueryData<InfiniteData<TaskPage>>(queryKey, { ...data, pages });
        return;
      }
      if (event.event !== 'created' || !matchesFilters({ ...event, created_at: event.at }, { ...filters, context_id: '' })) return;
      if (refetchTimer.current) return;
      refetchTimer.current = setTimeout(() => {
        refetchTimer.current = null;
        void queryClient.invalidateQueries({ queryKey });
      }, 300);
    },
    [queryClient, queryKey, filters],
  );
  const liveStatus = useLiveTaskEvents(onEvent);
  useEffect(() => {
    // A stream the relay refused (the session ended): a read tells the app to sign in again.
    if (liveStatus === 'closed') void queryClient.invalidateQueries({ queryKey });
  }, [liveStatus, queryClient, queryKey]);

  const rows = tasks.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Live handoffs</h1>
      <LiveStatusLine status={liveStatus} />
      <TaskFiltersForm label="Filter handoffs" filters={filters} onApply={(next) => setSearchParams(filtersToQuery(next))} />
      {tasks.isPending && <p role="status">Loading handoffs…</p>}
      {tasks.isError && <ErrorMessage error={tasks.error} />}
      {tasks.isSuccess && rows.length === 0 && <p>No handoffs match these filters.</p>}
      {rows.length > 0 && <TaskTable rows={rows} caption="Handoffs, newest first" />}
      {tasks.hasNextPage && (
        <button type="button" className="button secondary" disabled={tasks.isFetchingNextPage} onClick={() => void tasks.fetchNextPage()}>
          {tasks.isFetchingNextPage ? 'Loading older handoffs…' : 'Older'}
        </button>
      )}
    </>
  );
}
