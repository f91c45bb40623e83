import { ApiError } from '../api/api-error';
import type { NewUpstreamAgent, NewUpstreamAuth } from '../api/types';

/** The inputs of the form that connects an upstream A2A agent, by their names. */
export const UPSTREAM_FORM_FIELDS = ['handle', 'name', 'card_url', 'scheme', 'secret', 'header_name', 'client_id', 'token_url', 'scope', 'resource'] as const;
export type UpstreamFormField = (typeof UPSTREAM_FORM_FIELDS)[number];

/** How the relay authenticates to the upstream agent, as the form offers it (`none`: no credential). */
export type CredentialKind = 'none' | NewUpstreamAuth['scheme'];

export const CREDENTIAL_KINDS: ReadonlyArray<{ kind: CredentialKind; label: string }> = [
  { kind: 'none', label: 'None' },
  { kind: 'api_key', label: 'API key' },
  { kind: 'bearer', label: 'Bearer token' },
  { kind: 'oauth2', label: 'OAuth2 client credentials' },
];

/** The form's fields each credential kind uses beside the secret. */
export const CREDENTIAL_FIELDS: Record<CredentialKind, ReadonlyArray<UpstreamFormField>> = {
  none: [],
  api_key: ['secret', 'header_name'],
  bearer: ['secret'],
  oauth2: ['client_id', 'secret', 'token_url', 'scope', 'resource'],
};

const isField = (value: string): value is UpstreamFormField => (UPSTREAM_FORM_FIELDS as readonly string[]).includes(value);

/**
 * The form's input an admin API error is about, or null: the field its validation named
 * (`upstream.auth.secret`), else the one its message starts with (`upstream.card_url: the card …`).
 */
export function upstreamErrorField(error: unknown): UpstreamFormField | null {
  if (!(error instanceof ApiError)) return null;
  const named = error.fields[0]?.field ?? (typeof error.data.field === 'string' ? error.data.field : undefined) ?? /^([a-z_.]+):/.exec(error.message)?.[1];
  if (!named) return null;
  const field = named.replace(/^upstream\./, '').replace(/^auth\./, '');
  return isField(field) ? field : null;
}

/** The `POST /admin/agents` body the form's values make: blank optional values left out, the credential only for a kind that has one. */
export function newUpstreamAgent(values: Record<UpstreamFormField, string>): NewUpstreamAgent {
  const value = (field: UpstreamFormField): string | undefined => values[field].trim() || undefined;
  const kind = values.scheme as CredentialKind;
  const upstream: NewUpstreamAgent['upstream'] = { card_url: values.card_url.trim() };
  if (kind !== 'none') {
    const auth: NewUpstreamAuth = { scheme: kind, secret: values.secret };
    for (const field of CREDENTIAL_FIELDS[kind]) {
      const given = value(field);
      if (field !== 'secret' && given !== undefined) auth[field as Exclude<keyof NewUpstreamAuth, 'scheme' | 'secret'>] = given;
    }
    upstream.auth = auth;
  }
  return { handle: values.handle.trim(), name: values.name.trim(), upstream };
}
