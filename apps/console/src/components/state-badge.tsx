const STATE_LABELS: Record<string, string> = {
  held: 'Held for approval',
  pending: 'Pending',
  accepted: 'Accepted',
  input_required: 'Input required',
  completed: 'Completed',
  cancelled: 'Cancelled',
  canceled: 'Cancelled',
  failed: 'Failed',
  rejected: 'Rejected',
};

export function stateLabel(state: string): string {
  return STATE_LABELS[state] ?? state;
}

/** A task's state as a word with its colour (the word carries the meaning; the colour helps). */
export function StateBadge({ state }: { state: string }) {
  return <span className={`badge state-${state}`}>{stateLabel(state)}</span>;
}
