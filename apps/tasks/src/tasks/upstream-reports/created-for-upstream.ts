import { Inject, Injectable } from '@nestjs/common';
import type { LoadedTask } from '../store/change-write';
import type { TaskRow } from '../store/task-rows';
import { UpstreamRecipients } from './upstream-recipients';

/** How long a task created for an upstream agent is kept for the first report of its answer. */
const KEPT_MS = 30_000;
/** The most kept at once: past it, the oldest go. */
const MAX_KEPT = 2000;

/**
 * Tasks this process created for upstream agents, kept as their create wrote them until the first
 * report of the agent's answer, which then starts from the copy instead of reading the task back.
 * The copy is the task at the version its create wrote, when the recipient held no message of it
 * yet. A task changed meanwhile (the sender cancelled it, wrote again) has moved on from that
 * version: the report's write, conditional on the version it started from, writes nothing, and the
 * task is read again, as for any change decided on a stale read. A copy is used once; one not
 * used within KEPT_MS, or pushed out by MAX_KEPT newer ones, is dropped and the report reads the task.
 * Only a task created pending (not held), with no artifacts, for an agent this process knows to
 * be an upstream agent (the directory's yes it holds), is kept.
 */
@Injectable()
export class CreatedForUpstream {
  private readonly kept = new Map<string, { task: LoadedTask; until: number }>();

  constructor(@Inject(UpstreamRecipients) private readonly upstreams: UpstreamRecipients) {}

  /** Keeps `task` as its create wrote it, when it is one the first report may start from. */
  created(task: TaskRow, artifacts: number, now = Date.now()): void {
    if (task.state !== 'pending' || artifacts > 0 || !this.upstreams.knownUpstream(task.recipient_id, task.recipient_handle, now)) return;
    this.kept.set(task.id, { task: { ...task, artifacts: [] }, until: now + KEPT_MS });
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value as string);
  }

  /** The task as its create wrote it, once, if it is still kept. */
  take(taskId: string, now = Date.now()): LoadedTask | undefined {
    const id = taskId.toUpperCase();
    const entry = this.kept.get(id);
    if (!entry) return undefined;
    this.kept.delete(id);
    return entry.until > now ? entry.task : undefined;
  }
}
