import type { RegisteredAgent } from '../../api/types';
import { ShownOnceSecret } from '../../components/shown-once-secret';

/** What registration shows once: the agent's API key and webhook signing secret. */
export function RegisteredAgentSecrets({ registered, onDone }: { registered: RegisteredAgent; onDone: () => void }) {
  return (
    <section className="card notice" aria-labelledby="registered-title">
      <h2 id="registered-title">Registered {registered.agent.handle}</h2>
      <p>Copy these now: the relay shows them only this once and keeps only their hashes or sealed copies.</p>
      <ShownOnceSecret label="API key" value={registered.api_key} />
      <ShownOnceSecret label="Webhook secret" value={registered.webhook_secret} />
      <button type="button" className="button secondary" onClick={onDone}>
        I have copied them
      </button>
    </section>
  );
}
