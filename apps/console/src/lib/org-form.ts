import { ApiError } from '../api/api-error';
import { ORG_LIMITS, type OrgChanges, type OrgOrigin, type OrgQuotas, type OrgRecord, type RoleGrant } from '../api/types';
import { describeGrant } from './roles';

/** The inputs of the forms that create and edit an org, by their names (the quotas' as the API names them). */
export const ORG_FORM_FIELDS = ['name', 'display_name', 'agents', 'requests_per_minute', 'open_handoffs', 'stored_bytes', 'upstream_in_flight'] as const;
export type OrgFormField = (typeof ORG_FORM_FIELDS)[number];
export type OrgQuota = keyof OrgQuotas;

/** Each quota as people read it, and the range the relay takes. */
export const QUOTAS: ReadonlyArray<{ quota: OrgQuota; label: string; unit: string; min: number; max: number }> = [
  { quota: 'agents', label: 'Agents', unit: 'agents', min: 0, max: ORG_LIMITS.maxAgentsQuota },
  { quota: 'requests_per_minute', label: 'Requests per minute', unit: 'agent calls a minute', min: 1, max: ORG_LIMITS.maxRequestsPerMinuteQuota },
  { quota: 'open_handoffs', label: 'Open handoffs', unit: 'open handoffs', min: 0, max: ORG_LIMITS.maxOpenHandoffsQuota },
  { quota: 'stored_bytes', label: 'Stored bytes', unit: 'bytes its agents wrote into handoffs still stored', min: 0, max: ORG_LIMITS.maxStoredBytesQuota },
  {
    quota: 'upstream_in_flight',
    label: 'Upstream deliveries in flight',
    unit: 'deliveries to its upstream agents at once',
    min: 1,
    max: ORG_LIMITS.maxUpstreamInFlightQuota,
  },
];

export const ORIGIN_LABELS: Record<OrgOrigin, string> = { admin: 'Created by an admin', first_use: 'Made on first use' };

/** Why a person may not create or change orgs: it acts on the whole relay. */
export function relayWideAdminOnly(grants: readonly RoleGrant[], what: string): string {
  return `${what} needs the admin role relay-wide; your roles are ${grants.map(describeGrant).join(', ')}.`;
}

const isField = (value: string): value is OrgFormField => (ORG_FORM_FIELDS as readonly string[]).includes(value);

/** A quota as a list shows it: the number, or "no limit". */
export function quotaText(value: number | null): string {
  return value === null ? 'no limit' : value.toLocaleString('en');
}

/**
 * The body of `POST`/`PATCH /admin/orgs` the form's values make: an emptied display name or quota
 * is null (none, no limit); a quota is sent as the number typed, for the relay to check.
 */
export function orgChanges(values: Record<Exclude<OrgFormField, 'name'>, string>): OrgChanges {
  const quotas: Partial<OrgQuotas> = {};
  for (const { quota } of QUOTAS) {
    const text = values[quota].trim();
    quotas[quota] = text === '' ? null : Number(text);
  }
  return { display_name: values.display_name.trim() || null, quotas };
}

/** The form's values of an org as it is, for the edit form to start from. */
export function orgFormValues(org: OrgRecord): Record<Exclude<OrgFormField, 'name'>, string> {
  const quota = (value: number | null) => (value === null ? '' : String(value));
  return {
    display_name: org.display_name ?? '',
    agents: quota(org.quotas.agents),
    requests_per_minute: quota(org.quotas.requests_per_minute),
    open_handoffs: quota(org.quotas.open_handoffs),
    stored_bytes: quota(org.quotas.stored_bytes),
    upstream_in_flight: quota(org.quotas.upstream_in_flight),
  };
}

/**
 * The form's input an admin API error is about, or null: the field its validation named
 * (`quotas.agents`), the name of an org that exists already, else the one its message starts with.
 */
export function orgErrorField(error: unknown): OrgFormField | null {
  if (!(error instanceof ApiError)) return null;
  if (error.reason === 'org_exists') return 'name';
  const named = error.fields[0]?.field ?? (typeof error.data.field === 'string' ? error.data.field : undefined) ?? /^([a-z_.]+):/.exec(error.message)?.[1];
  if (!named) return null;
  const field = named.replace(/^quotas\./, '');
  return isField(field) ? field : null;
}
