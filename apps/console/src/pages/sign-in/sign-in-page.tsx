import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import { useSession } from '../../session/session-context';
import { useDocumentTitle } from '../../lib/use-document-title';

function signInError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return 'That admin token is not valid.';
    if (error.status === 429) return 'Too many failed sign-ins from here; wait a minute and try again.';
    return error.message;
  }
  return 'The relay did not answer; try again.';
}

/**
 * Sign-in: through the organisation's identity provider when the relay has one (a plain link: the
 * relay sends the browser there and back), and with the admin token when it has one; the token
 * goes to the relay once and is not kept anywhere.
 */
export function SignInPage({ expired }: { expired: boolean }) {
  useDocumentTitle('Sign in');
  const { signIn } = useSession();
  const methods = useQuery({ queryKey: ['sign-in-methods'], queryFn: () => adminApi.signInMethods() });
  const oidc = methods.data?.oidc ?? null;
  // Until the relay answers (or when it cannot), the token form is offered as before.
  const adminToken = methods.data?.admin_token ?? true;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const field = form.elements.namedItem('token') as HTMLInputElement;
    const token = field.value.trim();
    if (!token) {
      setError('Enter the admin token.');
      return;
    }
    setBusy(true);
    setError(null);
    signIn(token)
      .catch((caught: unknown) => setError(signInError(caught)))
      .finally(() => {
        field.value = '';
        setBusy(false);
      });
  };

  return (
    <main id="main" className="centered">
      <section className="card sign-in" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">AgentRelay console</h1>
        {expired && <p role="status">Your session ended. Sign in again.</p>}
        {oidc && (
          <p>
            <a className="button" href={oidc.start_url}>
              Sign in with your organisation
            </a>
          </p>
        )}
        {adminToken && (
          <form onSubmit={submit} noValidate>
            <label htmlFor="token">Admin token</label>
            <input id="token" name="token" type="password" autoComplete="off" spellCheck={false} aria-describedby="token-help" required />
            <p id="token-help" className="hint">
              The relay's RELAY_ADMIN_TOKEN. It is sent once to start a session and never stored in the browser.
            </p>
            {error && (
              <p role="alert" className="error">
                {error}
              </p>
            )}
            <button type="submit" className="button" disabled={busy}>
              Sign in
            </button>
          </form>
        )}
      </section>
    </main>
  );
}
