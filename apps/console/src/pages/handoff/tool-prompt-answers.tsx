import { Link } from 'react-router';
import type { TaskToolPrompts } from '../../api/types';
import { TimeStamp } from '../../components/time-stamp';

const DECISION_LABELS = { allow: 'Allowed', deny: 'Denied' } as const;

/** Who answers the handoff's tool prompts (people, by a rule of the recipient's trust policy), and their answers. */
export function ToolPromptAnswers({ toolPrompts, recipient }: { toolPrompts: TaskToolPrompts; recipient: string }) {
  return (
    <section aria-labelledby="tool-prompts-title">
      <h2 id="tool-prompts-title">Tool prompts</h2>
      <p>
        The rule &quot;{toolPrompts.rule}&quot; of {recipient}&apos;s trust policy gives this handoff&apos;s tool prompts to people with the approver role, not
        to its sender{toolPrompts.four_eyes ? "; four eyes: the sending agent's owner may not answer" : ''}. Open questions wait in the{' '}
        <Link to="/approvals">approvals</Link>.
      </p>
      {toolPrompts.answers.length === 0 ? (
        <p>No tool prompt of this handoff has been answered.</p>
      ) : (
        <table className="table">
          <caption>Answers to its tool prompts, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Answered</th>
              <th scope="col">By</th>
              <th scope="col">Answer</th>
              <th scope="col">Reason</th>
              <th scope="col">Request</th>
            </tr>
          </thead>
          <tbody>
            {toolPrompts.answers.map((answer) => (
              <tr key={answer.request_id}>
                <td>
                  <TimeStamp at={answer.answered_at} />
                </td>
                <td>{answer.answered_by}</td>
                <td>{DECISION_LABELS[answer.decision]}</td>
                <td>{answer.reason ?? '—'}</td>
                <td>
                  <code>{answer.request_id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
