import { Module } from '@nestjs/common';
import { InboxStreams } from './inbox-stream';
import { StreamIds } from './stream-ids';
import { TaskEventFeed } from './task-event-feed';
import { TaskStreams } from './task-streams';

/** Streams of task events (A2A task streams and the AgentRelay live inbox), fed by one task event subscription per edge. */
@Module({
  providers: [TaskEventFeed, TaskStreams, InboxStreams, StreamIds],
  exports: [TaskEventFeed, TaskStreams, InboxStreams],
})
export class StreamsModule {}
