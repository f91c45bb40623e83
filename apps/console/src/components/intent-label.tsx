const INTENT_LABELS: Record<string, string> = { inform: 'Inform', ask_question: 'Question', propose_action: 'Proposed action' };

export function intentLabel(intent: string): string {
  return INTENT_LABELS[intent] ?? intent;
}
