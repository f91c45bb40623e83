import type { LiveTaskEvent, TaskPage } from '../api/types';

export interface LiveRowsUpdate {
  pages: TaskPage[];
  /** The event names a task the loaded pages do not hold (a new one): the first page is stale. */
  unseenTask: boolean;
}

/** Applies a live task event to the loaded pages: the task's row takes the new state in place. */
export function applyLiveEvent(pages: TaskPage[], event: LiveTaskEvent): LiveRowsUpdate {
  let found = false;
  const updated = pages.map((page) => ({
    ...page,
    items: page.items.map((row) => {
      if (row.id !== event.task_id) return row;
      found = true;
      // An older event arriving after a newer read changes nothing.
      if (Date.parse(event.at) < Date.parse(row.updated_at)) return row;
      return {
        ...row,
        state: event.state,
        summary: event.summary || row.summary,
        updated_at: event.at,
        status_timestamp: event.state !== row.state ? event.at : row.status_timestamp,
      };
    }),
  }));
  return { pages: found ? updated : pages, unseenTask: !found };
}
