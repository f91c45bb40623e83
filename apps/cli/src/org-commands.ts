import type { OrgPage, OrgRecord } from '@app/contracts';
import { displayLine } from '@app/relay-client';
import type { AdminCaller } from './approval-commands';
import { usage } from './cli-errors';

export const ORGS_USAGE = `  orgs [--limit <n>]                list orgs: name, display name, agents and quotas
  orgs create <org> [--display-name <text>] [--max-agents <n>] [--requests-per-minute <n>]
           [--max-open-handoffs <n>] [--max-stored-bytes <n>[K|M|G]]
           [--max-upstream-in-flight <n>] [--chain-bounds <json>] [--approvals-slack-url <url>]
           [--tenant <tenant>]
                                    create an org (with RELAY_ORGS_EXPLICIT=true, agents are
                                    registered only in orgs created this way)
  orgs show <org>                   one org: display name, origin, agents, quotas, default trust,
                                    chain bounds, A2A tenant
  orgs update <org> [--display-name <text>|none] [--max-agents <n>|none]
           [--requests-per-minute <n>|none] [--max-open-handoffs <n>|none]
           [--max-stored-bytes <n>[K|M|G]|none] [--max-upstream-in-flight <n>|none]
           [--chain-bounds <json>|none] [--approvals-slack-url <url>|none] [--tenant <tenant>|none]
                                    change an org's display name, quotas, chain bounds,
                                    approvals Slack channel or tenant
                                    (--max-open-handoffs: unfinished handoffs its agents sent;
                                    --max-stored-bytes: bytes its agents wrote into handoffs
                                    still stored, 50M = 50 MiB; --max-upstream-in-flight:
                                    deliveries to its upstream agents attempted at once)
                                    (--chain-bounds '{"max_depth": 3}': the fields of a trust
                                    policy's chain, for the handoffs to the org's agents)
                                    (--approvals-slack-url: the Slack incoming webhook where its
                                    held handoffs and tool prompts are announced; never shown back)
                                    (--tenant: the org's A2A tenant, on extra interfaces of its
                                    agents' cards; none removes them)`;

export interface OrgValues {
  'display-name'?: string;
  'max-agents'?: string;
  'requests-per-minute'?: string;
  'max-open-handoffs'?: string;
  'max-stored-bytes'?: string;
  'max-upstream-in-flight'?: string;
  'chain-bounds'?: string;
  'approvals-slack-url'?: string;
  tenant?: string;
  limit?: string;
}

type Print = (value: unknown, human: string) => void;

const orgPath = (name: string): string => `/admin/orgs/${encodeURIComponent(name)}`;

function describeOrg(org: OrgRecord): string {
  const trust = org.defaults.trust;
  const lines = [
    `${org.name}${org.display_name ? ` (${org.display_name})` : ''}`,
    `  origin:        ${org.origin === 'admin' ? 'created by an admin' : 'made on first use'}`,
    `  agents:        ${org.agents}${org.quotas.agents === null ? '' : ` of at most ${org.quotas.agents}`}`,
    `  calls:         ${org.quotas.requests_per_minute === null ? 'no org limit' : `at most ${org.quotas.requests_per_minute} a minute across its agents`}`,
    `  open handoffs: ${org.quotas.open_handoffs === null ? 'no org limit' : `at most ${org.quotas.open_handoffs} sent by its agents and not finished`}`,
    `  stored bytes:  ${org.quotas.stored_bytes === null ? 'no org limit' : `at most ${org.quotas.stored_bytes} written by its agents into handoffs still stored`}`,
    `  upstream:      ${org.quotas.upstream_in_flight === null ? 'no org limit' : `at most ${org.quotas.upstream_in_flight} deliveries to its upstream agents at once`}`,
    `  default trust: ${trust === null ? 'the relay’s (teammates only)' : `allow ${trust.allow.join(',') || '-'}; block ${trust.block.join(',') || '-'}; ${trust.hold.length} hold rules`}`,
    `  chain bounds:  ${Object.keys(org.chain).length === 0 ? 'the relay’s' : JSON.stringify(org.chain)}`,
    `  approvals:     ${approvalsChannel(org)}`,
    `  A2A tenant:    ${org.tenant ?? 'none (its agents’ cards have no tenant)'}`,
  ];
  return `${lines.map(displayLine).join('\n')}\n`;
}

function approvalsChannel(org: OrgRecord): string {
  const slack = org.notifications?.approvals_slack_url;
  if (!slack) return 'unknown (the notifier did not answer)';
  return slack.configured ? `Slack at ${slack.host ?? '?'}` : 'the relay’s channel (none of its own)';
}

/** `--chain-bounds` as the JSON object the admin API checks; the relay names what is wrong inside it. */
function chainBounds(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw usage('--chain-bounds must be a JSON object such as \'{"max_depth": 3}\', or none.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw usage('--chain-bounds must be a JSON object such as \'{"max_depth": 3}\', or none.');
  return parsed;
}

const BYTE_UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 };

/** `--max-stored-bytes` as bytes: a whole number, with K, M or G for KiB, MiB or GiB. */
function byteCount(text: string): number {
  const match = /^([0-9]{1,13})([KMG]?)$/i.exec(text.trim());
  if (!match) throw usage('--max-stored-bytes must be a whole number of bytes (with K, M or G for KiB, MiB or GiB), or none.');
  return Number(match[1]) * BYTE_UNITS[match[2].toUpperCase()];
}

/** The fields of `orgs create` and `orgs update`; `none` clears one. */
function orgFields(values: OrgValues): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const displayName = values['display-name'];
  if (displayName !== undefined) fields.display_name = displayName === 'none' ? null : displayName;
  const quotas: Record<string, number | null> = {};
  const quota = (option: 'max-agents' | 'requests-per-minute' | 'max-open-handoffs' | 'max-upstream-in-flight', field: string, what: string): void => {
    const value = values[option];
    if (value === undefined) return;
    if (value === 'none') quotas[field] = null;
    else if (/^[0-9]{1,8}$/.test(value)) quotas[field] = Number(value);
    else throw usage(`--${option} must be a whole number of ${what}, or none.`);
  };
  quota('max-agents', 'agents', 'agents');
  quota('requests-per-minute', 'requests_per_minute', 'calls');
  quota('max-open-handoffs', 'open_handoffs', 'handoffs');
  quota('max-upstream-in-flight', 'upstream_in_flight', 'deliveries');
  const storedBytes = values['max-stored-bytes'];
  if (storedBytes !== undefined) quotas.stored_bytes = storedBytes === 'none' ? null : byteCount(storedBytes);
  if (Object.keys(quotas).length > 0) fields.quotas = quotas;
  const chain = values['chain-bounds'];
  if (chain !== undefined) fields.chain = chain === 'none' ? null : chainBounds(chain);
  const slackUrl = values['approvals-slack-url'];
  if (slackUrl !== undefined) fields.notifications = { approvals_slack_url: slackUrl === 'none' ? null : slackUrl };
  const tenant = values.tenant;
  if (tenant !== undefined) fields.tenant = tenant === 'none' ? null : tenant;
  return fields;
}

/** `agentrelay orgs …`: the admin API's orgs. */
export async function runOrgsCommand(api: AdminCaller, rest: string[], values: OrgValues, print: Print): Promise<void> {
  const [action, name] = rest;
  if (action === undefined) {
    const limit = values.limit ?? '200';
    const page = await api.call<OrgPage>('GET', `/admin/orgs?limit=${encodeURIComponent(limit)}`);
    const rows = [
      ['ORG', 'DISPLAY NAME', 'AGENTS', 'MAX AGENTS', 'CALLS/MIN', 'MAX OPEN', 'MAX BYTES', 'MAX UPSTREAM'],
      ...page.items.map((org) => [
        org.name,
        org.display_name ?? '-',
        String(org.agents),
        org.quotas.agents === null ? '-' : String(org.quotas.agents),
        org.quotas.requests_per_minute === null ? '-' : String(org.quotas.requests_per_minute),
        org.quotas.open_handoffs === null ? '-' : String(org.quotas.open_handoffs),
        org.quotas.stored_bytes === null ? '-' : String(org.quotas.stored_bytes),
        org.quotas.upstream_in_flight === null ? '-' : String(org.quotas.upstream_in_flight),
      ]),
    ];
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => displayLine(row[column]).length)));
    const text = rows
      .map((row) =>
        row
          .map((cell, column) => displayLine(cell).padEnd(widths[column]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n');
    print(page, page.items.length === 0 ? 'No orgs.\n' : `${text}\n`);
    return;
  }
  if (!name) throw usage(`Missing the org name.`);
  switch (action) {
    case 'create': {
      const org = await api.call<OrgRecord>('POST', '/admin/orgs', { name, ...orgFields(values) });
      print(org, `Created the org ${org.name}.\n${describeOrg(org)}`);
      return;
    }
    case 'show': {
      const org = await api.call<OrgRecord>('GET', orgPath(name));
      print(org, describeOrg(org));
      return;
    }
    case 'update': {
      const fields = orgFields(values);
      if (Object.keys(fields).length === 0)
        throw usage(
          'orgs update needs --display-name, --max-agents, --requests-per-minute, --max-open-handoffs, --max-stored-bytes, --max-upstream-in-flight, --chain-bounds, --approvals-slack-url or --tenant.',
        );
      const org = await api.call<OrgRecord>('PATCH', orgPath(name), fields);
      print(org, describeOrg(org));
      return;
    }
    default:
      throw usage(`Unknown orgs action "${action}".`);
  }
}
