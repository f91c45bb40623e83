import { TestOpenIdProvider, type OpenIdAccount } from './openid-provider';

export const CONSOLE_CLIENT_ID = 'agentrelay-console';
export const CONSOLE_CLIENT_SECRET = 'console-client-secret-0123456789abcdef';

/** An OpenID Provider with people for the console's sign-in; the `agentrelay` scope releases their `agentrelay_role`. */
export function startConsoleProvider(accounts: OpenIdAccount[]): Promise<TestOpenIdProvider> {
  return TestOpenIdProvider.start({ accounts, scopeClaims: { agentrelay: ['agentrelay_role'] } });
}

/** The edge's settings for signing in through that provider. */
export function consoleOidcEnv(provider: TestOpenIdProvider, extra: Record<string, string> = {}): Record<string, string> {
  return {
    RELAY_CONSOLE_OIDC_ISSUER: provider.issuer,
    RELAY_CONSOLE_OIDC_CLIENT_ID: CONSOLE_CLIENT_ID,
    RELAY_CONSOLE_OIDC_CLIENT_SECRET: CONSOLE_CLIENT_SECRET,
    RELAY_CONSOLE_OIDC_SCOPES: 'profile email groups agentrelay',
    ...extra,
  };
}

/** The console as a client of the provider, once the edge's address (its redirect URL) is known. */
export function registerConsoleClient(provider: TestOpenIdProvider, relayUrl: string): void {
  provider.addWebClient({
    client_id: CONSOLE_CLIENT_ID,
    client_secret: CONSOLE_CLIENT_SECRET,
    redirect_uris: [`${relayUrl}/admin/session/oidc/callback`],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
}

export interface OidcSignIn {
  /** `relay_session=<value>`, ready for a Cookie header. */
  cookie: string;
  csrf: string;
  session: Record<string, unknown>;
}

/** Where a sign-in through the provider ended when it did not reach the console: the relay's answer. */
export interface OidcSignInRefusal {
  status: number;
  headers: Headers;
  body: string;
}

/** A cookie jar of one origin, by name (the provider's and the relay's cookies never share a name). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

/**
 * Signs in as a browser would, without one: the relay's start, the provider's login form (any
 * password) and consent, then the relay's callback. Resolves with the session, or with the
 * relay's answer when the callback did not lead to the console.
 */
export async function signInWithOidc(relayUrl: string, login: string): Promise<OidcSignIn | OidcSignInRefusal> {
  const relayJar = new CookieJar();
  const providerJar = new CookieJar();
  const relayOrigin = new URL(relayUrl).origin;
  let response = await fetch(`${relayUrl}/admin/session/oidc/start`, { redirect: 'manual' });
  relayJar.take(response);
  for (let step = 0; step < 20; step++) {
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get('location') as string, response.url || relayUrl);
      if (location.origin === relayOrigin && location.pathname === '/console/') break;
      const jar = location.origin === relayOrigin ? relayJar : providerJar;
      response = await fetch(location, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(response);
      continue;
    }
    if (new URL(response.url).origin === relayOrigin) {
      return { status: response.status, headers: response.headers, body: await response.text() };
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (!action) throw new Error(`the provider answered ${response.status} without a form: ${page.slice(0, 300)}`);
    const form: Record<string, string> = page.includes('name="password"') ? { prompt: 'login', login, password: 'any password' } : { prompt: 'consent' };
    const target = new URL(action.replace(/&amp;/g, '&'), response.url);
    response = await fetch(target, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: providerJar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    providerJar.take(response);
  }
  const value = relayJar.get('relay_session');
  if (!value) throw new Error('the sign-in reached the console without a session cookie');
  const cookie = `relay_session=${value}`;
  const session = (await (await fetch(`${relayUrl}/admin/session`, { headers: { cookie } })).json()) as Record<string, unknown>;
  return { cookie, csrf: session.csrf_token as string, session };
}

export function isSignedIn(result: OidcSignIn | OidcSignInRefusal): result is OidcSignIn {
  return 'cookie' in result;
}
