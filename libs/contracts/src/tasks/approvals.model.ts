/** A person's decision on a held handoff (`POST /admin/approvals/{id}/approve` or `/deny`). */
export const APPROVAL_DECISIONS = ['approve', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];
