import type { TaskState } from './task-vocabulary';
import type { PermissionRequest } from './tool-prompts';

/** A person's decision on a held handoff (`POST /admin/approvals/{id}/approve` or `/deny`). */
export const APPROVAL_DECISIONS = ['approve', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** A tool prompt waiting for a person's answer: the question, and the handoff it was asked on. */
export interface PendingToolPrompt {
  task_id: string;
  sender: string;
  recipient: string;
  summary: string;
  state: TaskState;
  /** The tool-prompt rule that gave the handoff's prompts to people. */
  rule: string;
  four_eyes: boolean;
  asked_at: string;
  request: PermissionRequest;
}

export interface PendingToolPromptsReply {
  items: PendingToolPrompt[];
}
