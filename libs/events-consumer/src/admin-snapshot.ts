import type { AdminTaskPage, AdminTaskRow, TaskState } from '@app/contracts';

/** The states of an open task (not terminal). */
export const OPEN_TASK_STATES: readonly TaskState[] = ['pending', 'accepted', 'input_required'];

export interface AdminSnapshotOptions {
  /** The relay's URL (RELAY_PUBLIC_URL). */
  relayUrl: string;
  /** An admin API credential with at least the auditor role (the list hides message bodies from it anyway). */
  adminToken: string;
  /** Rows per page (at most 200). */
  pageSize?: number;
  /** Which tasks: the open ones by default. */
  states?: readonly TaskState[];
}

/**
 * Every open task, page by page, from the admin API's list (`GET /admin/tasks`), each row with the
 * outbox position of the newest event its state includes: the `read` of `RelayEventConsumer.startFromSnapshot`.
 */
export async function* adminOpenTasks(options: AdminSnapshotOptions): AsyncIterable<AdminTaskRow[]> {
  let cursor: string | null = null;
  do {
    const url = new URL('/admin/tasks', options.relayUrl);
    url.searchParams.set('state', (options.states ?? OPEN_TASK_STATES).join(','));
    url.searchParams.set('limit', String(options.pageSize ?? 200));
    if (cursor) url.searchParams.set('cursor', cursor);
    const response = await fetch(url, { headers: { authorization: `Bearer ${options.adminToken}` } });
    if (!response.ok) throw new Error(`GET ${url.pathname} answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
    const page = (await response.json()) as AdminTaskPage;
    yield page.items;
    cursor = page.next_cursor;
  } while (cursor);
}
