/**
 * The contracts as clients read them: the task's words and tables as values, the views and limits
 * as types, with nothing that needs a schema library or decorators at run time. The CLI, the MCP
 * server, the relay client and the console import this; the services import the index.
 */
export * from './tasks/task-vocabulary';
export * from './limits';
export type { AdminErrorBody, FieldError } from './errors';
export type { ArtifactView, MessageView, PartView, ParticipantRef, ProposedAction, TaskHold, TaskView } from './tasks/task.model';
export * from './tasks/tool-prompts';
export * from './tasks/admin-tasks.model';
export * from './tasks/approvals.model';
export * from './directory/agent.model';
export * from './directory/agent-owner';
export type { HoldRule } from './directory/hold-rules';
export * from './notifier/deliveries.model';
export type * from './upstream/upstream.model';
export * from './orgs/orgs.model';
export type * from './orgs/person-roles.model';
