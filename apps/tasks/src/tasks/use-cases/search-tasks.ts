import { Inject, Injectable } from '@nestjs/common';
import { ADMIN_TASK_LIMITS, type AgentSearchReply, type AgentSearchTasksRequest } from '@app/contracts';
import { TaskSearch } from '../admin/task-search';
import { toTaskView } from '../store/task-rows';

/** The search of `tasks/search`: only tasks the caller takes part in, as sender, recipient or either. */
@Injectable()
export class SearchTasks {
  constructor(@Inject(TaskSearch) private readonly taskSearch: TaskSearch) {}

  async search(request: AgentSearchTasksRequest): Promise<AgentSearchReply> {
    const found = await this.taskSearch.run(
      { agent_id: request.caller_id },
      request.query,
      { agent_id: request.caller_id, role: request.role ?? 'either', ...(request.states ? { states: request.states } : {}) },
      request.limit ?? ADMIN_TASK_LIMITS.searchDefaultLimit,
      request.cursor,
      request.caller_id,
      request.counterpart_id,
    );
    return {
      items: found.rows.map((row) => ({
        task: toTaskView(row, [], [], Number(row.unread_messages ?? 0)),
        rank: Number(row.rank),
        highlights: found.highlights.get(row.id) ?? [],
      })),
      next_cursor: found.next_cursor,
    };
  }
}
