import { Inject, Injectable } from '@nestjs/common';
import { ADMIN_TASK_LIMITS, type AdminSearchPage, type AdminSearchTasksRequest } from '@app/contracts';
import { toAdminRow } from './admin-row';
import { TaskSearch } from './task-search';

/** The admin API's relay-wide search, with the admin list's filters. */
@Injectable()
export class SearchAdminTasks {
  constructor(@Inject(TaskSearch) private readonly taskSearch: TaskSearch) {}

  async search(request: AdminSearchTasksRequest): Promise<AdminSearchPage> {
    const found = await this.taskSearch.run('admin', request.query, request, request.limit ?? ADMIN_TASK_LIMITS.searchDefaultLimit, request.cursor);
    return {
      items: found.rows.map((row) => ({ task: toAdminRow(row), rank: Number(row.rank), highlights: found.highlights.get(row.id) ?? [] })),
      next_cursor: found.next_cursor,
    };
  }
}
