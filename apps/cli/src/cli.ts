import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { displayLine } from '@app/relay-client';
import { AGENT_COMMANDS, AGENT_USAGE, runAgentCommand, type AgentCommand } from './agent-commands';
import { APPROVALS_USAGE, runApprovalsCommand } from './approval-commands';
import { ORGS_USAGE, runOrgsCommand } from './org-commands';
import { CliError, EXIT, USAGE_HINT, usage } from './cli-errors';
import { runWorkerCommand, WORKER_USAGE } from './worker/worker-command';

import { HOOK_USAGE, readProcessStdin, runHookCommand } from './hooks/hook-command';
import { runSetupCommand } from './setup/setup-command';
import { listsItWouldDrop, trustYaml } from './trust-file';
import type {
  AgentPage,
  AgentRecord,
  ApiKeyInfo,
  ApiKeyList,
  CreateKeyReply,
  DeliveryView,
  ListDeliveriesReply,
  TrustPolicy,
  UpstreamChangeDecisionReply,
  UpstreamRefreshReply,
  UpstreamStatusView,
} from '@app/contracts';

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile?(path: string): Promise<string>;
  /** Stops `inbox --watch`. */
  signal?: AbortSignal;
  /** The hook input of `agentrelay hook` (the process's stdin by default). */
  readStdin?(signal: AbortSignal): Promise<string>;
  /** How the person ran the CLI (`npm run cli --`, `./bin/agentrelay.mjs`), for the commands hints suggest; `agentrelay` by default. */
  program?: string;
}

export type CliEnv = Record<string, string | undefined>;

export { EXIT } from './cli-errors';

export const USAGE = `Usage: agentrelay <command> [options]

${AGENT_USAGE}
${WORKER_USAGE}

${HOOK_USAGE}
Admin commands (authenticate with $RELAY_ADMIN_TOKEN or --token):
  register <handle> --name <name> [--role <role>] [--description <text>] [--skills a,b]
           [--email <email>] [--owner <sub>] [--webhook-url <url>] [--slack-webhook-url <url>] [--metadata <json>]
           [--webhook-timeout-ms <1000-30000>]
           [--input-modes text/plain,image/*]
           [--card-url <url> [--upstream-auth api_key|bearer|oauth2 --upstream-secret-file <file>
            [--upstream-header <name>] [--upstream-client-id <id> [--upstream-token-url <url>]
            [--upstream-scope <scopes>]]
            [--upstream-client-cert-file <pem> --upstream-client-key-file <pem> [--upstream-ca-file <pem>]]]
                                    register an agent and print its API key (shown once); with
                                    --card-url, an existing A2A server the relay delivers its handoffs to
                                    (with the client certificate files: over mTLS)
  agents [--all] [--limit <n>]      list agents (--all includes disabled ones)
  agents upstream <handle>          an upstream agent's accepted card, pending card change, mTLS and health
  agents refresh-card <handle>      read an upstream agent's card now (changes of its URL, interface or
                                    security wait for agents accept-card / reject-card)
  agents accept-card <handle>       accept the pending card change: deliveries use the new card
  agents reject-card <handle>       reject it: the accepted card stays
  agents set-tls <handle> --upstream-client-cert-file <pem> --upstream-client-key-file <pem>
           [--upstream-ca-file <pem>]   replace the mTLS client certificate (no downtime)
  agents remove-tls <handle>        stop presenting a client certificate
  show <handle>                     show one agent, private fields included (show <task> is the agent command)
  update <handle> [--name …] [--role …] [--description …] [--skills a,b] [--email …] [--owner <sub>|none]
           [--webhook-url …] [--slack-webhook-url …] [--metadata <json>] [--webhook-timeout-ms <ms>|default]
           [--input-modes a,b | --input-modes default]
  disable <handle>                  disable an agent: its keys stop working at once
  keys list <handle>                list an agent's keys (display prefixes only)
  keys rotate <handle> [--revoke-old]
                                    make a new key (and optionally revoke every older one)
  keys revoke <handle> <prefix>     revoke one key by its display prefix (ah_live_XXXXXXXX)
  trust apply <file.yaml> [--agent <handle>]
                                    replace an agent's trust policy from a trust.yaml file (a file
                                    that leaves out a list the policy has is refused: write it
                                    empty, e.g. hold: [], to remove its rules)
  trust show <handle>               print an agent's trust policy as trust.yaml: allow, block, hold
                                    and tool_prompts, as trust apply reads it back
  webhook-secret rotate <handle>    make a new webhook signing secret (shown once)
  deliveries [--status pending|failed|succeeded|dead] [--task <task id>] [--limit <n>]
                                    list notification deliveries, newest first
  redeliver <delivery id>           attempt a delivery again (dead letters included)
${APPROVALS_USAGE}
${ORGS_USAGE}

Options:
  --json            print JSON (for scripts)
  --url <url>       relay URL (default: $RELAY_URL, else http://127.0.0.1:8080)
  --token <token>   admin token (default: $RELAY_ADMIN_TOKEN)
  --api-key <key>   agent API key (default: $AGENTRELAY_API_KEY)
  -h, --help        show this help

Exit codes: 0 success, 1 the relay refused the request, 2 usage error, 3 relay unreachable,
4 bad admin token or API key, 5 no such thread or recipient (or not yours),
6 the thread's state does not allow it (finished, not yet accepted, someone else was first).
`;

export const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  url: { type: 'string' },
  token: { type: 'string' },
  name: { type: 'string' },
  role: { type: 'string' },
  description: { type: 'string' },
  skills: { type: 'string' },
  email: { type: 'string' },
  owner: { type: 'string' },
  'webhook-url': { type: 'string' },
  'slack-webhook-url': { type: 'string' },
  'webhook-timeout-ms': { type: 'string' },
  metadata: { type: 'string' },
  'input-modes': { type: 'string' },
  all: { type: 'boolean' },
  limit: { type: 'string' },
  'revoke-old': { type: 'boolean' },
  agent: { type: 'string' },
  status: { type: 'string' },
  task: { type: 'string' },
  'api-key': { type: 'string' },
  intent: { type: 'string' },
  diff: { type: 'string', multiple: true },
  test: { type: 'string', multiple: true },
  ref: { type: 'string', multiple: true },
  link: { type: 'string', multiple: true },
  action: { type: 'string' },
  target: { type: 'string' },
  rationale: { type: 'string' },
  'idempotency-key': { type: 'string' },
  for: { type: 'string' },
  session: { type: 'string' },
  since: { type: 'string' },
  watch: { type: 'boolean' },
  interval: { type: 'string' },
  'card-url': { type: 'string' },
  'upstream-auth': { type: 'string' },
  'upstream-secret-file': { type: 'string' },
  'upstream-header': { type: 'string' },
  'upstream-client-id': { type: 'string' },
  'upstream-token-url': { type: 'string' },
  'upstream-scope': { type: 'string' },
  'upstream-client-cert-file': { type: 'string' },
  'upstream-client-key-file': { type: 'string' },
  'upstream-ca-file': { type: 'string' },
  comment: { type: 'string' },
  reason: { type: 'string' },
  'display-name': { type: 'string' },
  'max-agents': { type: 'string' },
  'requests-per-minute': { type: 'string' },
  'max-open-handoffs': { type: 'string' },
  'max-stored-bytes': { type: 'string' },
  'max-upstream-in-flight': { type: 'string' },
  'chain-bounds': { type: 'string' },
  'approvals-slack-url': { type: 'string' },
  tenant: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

interface ApiErrorBody {
  error?: { reason?: string; message?: string; fields?: Array<{ field: string; messages: string[] }> };
}

class AdminApi {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': contentType } : {}) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`Cannot reach the relay at ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, EXIT.unreachable);
    }
    const text = await response.text();
    const parsed = parseBody(text);
    if (response.ok) return parsed as T;
    const error = (parsed as ApiErrorBody | undefined)?.error;
    // A field's problem the message already states (a one-field refusal) is not printed twice.
    const fieldLines = (error?.fields ?? []).map((entry) => `${entry.field}: ${entry.messages.join(', ')}`).filter((line) => line !== error?.message);
    const detail = fieldLines.length > 0 ? fieldLines.map((line) => `  ${line}`).join('\n') : undefined;
    const message = `${response.status} ${error?.reason ?? response.statusText}: ${error?.message ?? text}${detail ? `\n${detail}` : ''}`;
    throw new CliError(message, response.status === 401 ? EXIT.unauthorized : EXIT.apiError, parsed);
  }
}

function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function agentPath(handle: string, suffix = ''): string {
  return `/admin/agents/${encodeURIComponent(handle)}${suffix}`;
}

function agentFields(values: Values): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (values.name !== undefined) fields.name = values.name;
  if (values.role !== undefined) fields.role = values.role;
  if (values.description !== undefined) fields.description = values.description;
  if (values.skills !== undefined)
    fields.skills = values.skills
      .split(',')
      .map((skill) => skill.trim())
      .filter(Boolean);
  if (values.email !== undefined) fields.email = values.email;
  // The owner four eyes refuse: their `sub` at the console's OpenID Provider; `none` clears it.
  if (values.owner !== undefined) fields.owner = values.owner === 'none' ? null : { subject: values.owner };
  if (values['webhook-url'] !== undefined) fields.notification_webhook_url = values['webhook-url'];
  if (values['slack-webhook-url'] !== undefined) fields.slack_webhook_url = values['slack-webhook-url'];
  const timeout = values['webhook-timeout-ms'];
  if (timeout !== undefined) {
    if (timeout !== 'default' && !/^\d+$/.test(timeout)) throw usage('--webhook-timeout-ms must be a number of milliseconds (1000-30000) or default');
    // The relay checks the bounds and names them.
    fields.webhook_timeout_ms = timeout === 'default' ? null : Number(timeout);
  }
  // The media types the agent accepts in parts sent to it; `default` restores the relay's.
  const inputModes = values['input-modes'];
  if (inputModes !== undefined)
    fields.input_modes =
      inputModes.trim() === 'default'
        ? null
        : inputModes
            .split(',')
            .map((mode) => mode.trim())
            .filter(Boolean);
  if (values.metadata !== undefined) {
    try {
      fields.metadata = JSON.parse(values.metadata);
    } catch {
      throw usage('--metadata must be a JSON object, e.g. --metadata \'{"repos_owned":["apps/web/"]}\'');
    }
  }
  return fields;
}

/** `--card-url` and the credential for an upstream A2A agent (the secret read from a file, never from the command line). */
async function upstreamFields(values: Values, io: CliIo): Promise<Record<string, unknown> | null> {
  const cardUrl = values['card-url'];
  const scheme = values['upstream-auth'];
  if (cardUrl === undefined) {
    if (scheme !== undefined || values['upstream-secret-file'] !== undefined) throw usage('--upstream-auth and --upstream-secret-file go with --card-url.');
    return null;
  }
  const tls = await tlsFields(values, io);
  if (scheme === undefined) return { card_url: cardUrl, ...(tls ? { tls } : {}) };
  if (scheme !== 'api_key' && scheme !== 'bearer' && scheme !== 'oauth2') throw usage('--upstream-auth must be api_key, bearer or oauth2.');
  const file = values['upstream-secret-file'];
  if (file === undefined) {
    throw usage('--upstream-auth needs --upstream-secret-file <file> (the API key, token or OAuth2 client secret, kept sealed by the relay).');
  }
  const clientId = values['upstream-client-id'];
  if (scheme === 'oauth2' && clientId === undefined) throw usage('--upstream-auth oauth2 needs --upstream-client-id <id>.');
  if (scheme !== 'oauth2' && (clientId ?? values['upstream-token-url'] ?? values['upstream-scope']) !== undefined) {
    throw usage('--upstream-client-id, --upstream-token-url and --upstream-scope go with --upstream-auth oauth2.');
  }
  const secret = (await (io.readFile ?? ((path: string) => readFile(path, 'utf8')))(file)).trim();
  const oauth2 =
    scheme === 'oauth2'
      ? {
          client_id: clientId,
          ...(values['upstream-token-url'] ? { token_url: values['upstream-token-url'] } : {}),
          ...(values['upstream-scope'] ? { scope: values['upstream-scope'] } : {}),
        }
      : {};
  return {
    card_url: cardUrl,
    auth: { scheme, secret, ...(values['upstream-header'] ? { header_name: values['upstream-header'] } : {}), ...oauth2 },
    ...(tls ? { tls } : {}),
  };
}

/** The mTLS client certificate and key (and CA) for an upstream agent, read from PEM files. */
async function tlsFields(values: Values, io: CliIo): Promise<Record<string, string> | null> {
  const certFile = values['upstream-client-cert-file'];
  const keyFile = values['upstream-client-key-file'];
  if (certFile === undefined && keyFile === undefined) {
    if (values['upstream-ca-file'] !== undefined) throw usage('--upstream-ca-file goes with --upstream-client-cert-file and --upstream-client-key-file.');
    return null;
  }
  if (certFile === undefined || keyFile === undefined) throw usage('--upstream-client-cert-file and --upstream-client-key-file go together.');
  const read = io.readFile ?? ((path: string) => readFile(path, 'utf8'));
  const caFile = values['upstream-ca-file'];
  return { client_cert: await read(certFile), client_key: await read(keyFile), ...(caFile ? { ca: await read(caFile) } : {}) };
}

function describeUpstream(status: UpstreamStatusView, program: string): string {
  const { upstream, card, tls, health } = status;
  const lines = [
    `${status.handle}`,
    `  upstream:      ${upstream.url} (${upstream.binding}, A2A ${upstream.protocol_version}, auth ${upstream.auth_scheme})`,
    `  card:          ${upstream.card_url}, read ${card.last_refresh_at ?? 'never'}${card.last_refresh_error ? ` (last refresh failed: ${card.last_refresh_error})` : ''}`,
    `  mTLS:          ${tls ? `${tls.client_cert_subject}, valid until ${tls.client_cert_not_after}${tls.ca ? ', own CA' : ''}` : 'none'}`,
    `  breaker:       ${health.breaker}`,
    `  last success:  ${health.last_success_at ?? '-'}`,
    `  last failure:  ${health.last_failure_at ? `${health.last_failure_at} ${health.last_failure_method}: ${health.last_failure_reason}` : '-'}`,
  ];
  const pending = card.pending_change;
  if (pending) {
    lines.push(`  PENDING CARD CHANGE (read ${pending.detected_at}; accept with: ${program} agents accept-card ${status.handle}):`);
    for (const change of pending.changes) lines.push(`    ${change.field}: ${JSON.stringify(change.old)} -> ${JSON.stringify(change.new)}`);
  }
  return `${lines.join('\n')}\n`;
}

const REFRESHED: Record<UpstreamRefreshReply['refresh']['outcome'], string> = {
  unchanged: 'The card has not changed.',
  applied: 'The card changed its profile only: applied.',
  pending: 'The card changed its interface or security: the change waits for review (deliveries use the accepted card).',
  rejected_before: 'The card shows a change an operator rejected: not proposed again (deliveries use the accepted card).',
  failed: 'The card could not be read: the accepted card stays.',
};

type Print = (value: unknown, human: string) => void;

/** `agents upstream|refresh-card|accept-card|reject-card|set-tls|remove-tls <handle>`. */
async function upstreamCommand(api: AdminApi, action: string, handle: string, values: Values, io: CliIo, print: Print): Promise<number> {
  const program = io.program ?? 'agentrelay';
  const path = (suffix: string) => agentPath(handle, `/upstream${suffix}`);
  switch (action) {
    case 'upstream': {
      const status = await api.call<UpstreamStatusView>('GET', path(''));
      print(status, describeUpstream(status, program));
      return EXIT.ok;
    }
    case 'refresh-card': {
      const refreshed = await api.call<UpstreamRefreshReply>('POST', path('/refresh'));
      const changed = refreshed.refresh.changes.map(
        (change) => `  ${change.field}${change.review ? ' (review)' : ''}: ${JSON.stringify(change.old)} -> ${JSON.stringify(change.new)}\n`,
      );
      print(
        refreshed,
        `${REFRESHED[refreshed.refresh.outcome]}${refreshed.refresh.error ? ` ${refreshed.refresh.error}` : ''}\n${changed.join('')}` +
          describeUpstream(refreshed, program),
      );
      return refreshed.refresh.outcome === 'failed' ? EXIT.apiError : EXIT.ok;
    }
    case 'accept-card':
    case 'reject-card': {
      const decided = await api.call<UpstreamChangeDecisionReply>('POST', path(`/pending-change/${action === 'accept-card' ? 'accept' : 'reject'}`));
      print(decided, `${action === 'accept-card' ? 'Accepted' : 'Rejected'} the card change of ${decided.handle}.\n${describeUpstream(decided, program)}`);
      return EXIT.ok;
    }
    case 'set-tls': {
      const tls = await tlsFields(values, io);
      if (!tls) throw usage('set-tls needs --upstream-client-cert-file and --upstream-client-key-file.');
      const status = await api.call<UpstreamStatusView>('PUT', path('/tls'), tls);
      print(status, `The relay presents ${status.tls?.client_cert_subject} to ${status.handle} from its next request.\n`);
      return EXIT.ok;
    }
    case 'remove-tls': {
      const status = await api.call<UpstreamStatusView>('DELETE', path('/tls'));
      print(status, `The relay presents no client certificate to ${status.handle} any more.\n`);
      return EXIT.ok;
    }
    default:
      throw usage(`Unknown agents action "${action}" (upstream, refresh-card, accept-card, reject-card, set-tls or remove-tls).`);
  }
}

function describeAgent(agent: AgentRecord): string {
  const lines = [
    `${agent.handle}${agent.disabled ? ' (disabled)' : ''}`,
    `  id:          ${agent.id}`,
    `  name:        ${agent.name}`,
    `  role:        ${agent.role ?? '-'}`,
    `  description: ${agent.description ?? '-'}`,
    `  skills:      ${agent.skills.join(', ') || '-'}`,
    `  email:       ${agent.email ?? '-'}${agent.email && agent.email_verified ? ' (verified as the owner’s)' : ''}`,
    `  owner:       ${agent.owner ? `${agent.owner.subject} at ${agent.owner.issuer}` : '- (four eyes refuse everyone until one is recorded)'}`,
    `  webhook:     ${agent.notification_webhook_url ?? '-'}`,
    `  slack:       ${agent.slack_webhook_url ?? '-'}`,
    `  timeout:     ${agent.webhook_timeout_ms === null ? 'relay default' : `${agent.webhook_timeout_ms} ms`} (webhook and push requests)`,
    `  metadata:    ${JSON.stringify(agent.metadata)}`,
    `  input modes: ${agent.input_modes?.join(', ') ?? 'default (text/plain, application/json)'}`,
  ];
  return `${lines.map(displayLine).join('\n')}\n`;
}

/** A table of text cells; every cell goes through displayLine, so no field can break or overwrite a row. */
function table(rows: string[][]): string {
  const cells = rows.map((row) => row.map(displayLine));
  const widths = cells[0].map((_, column) => Math.max(...cells.map((row) => row[column].length)));
  return (
    cells
      .map((row) =>
        row
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function keyRows(keys: ApiKeyInfo[]): string {
  return table([['PREFIX', 'CREATED', 'REVOKED'], ...keys.map((key) => [key.prefix, key.created_at, key.revoked_at ?? '-'])]);
}

function need(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (!value) throw usage(`Missing ${what}.`);
  return value;
}

/**
 * The `agentrelay` command: parses `argv` (without the node and script names), calls the admin
 * API and returns the exit code.
 */
export async function run(argv: string[], env: CliEnv, io: CliIo): Promise<number> {
  // Hooks and setup parse their own options: a hook must never exit 2, which blocks the client.
  if (argv[0] === 'hook') return runHookCommand(argv.slice(1), env, { stdout: io.stdout, stderr: io.stderr, readStdin: io.readStdin ?? readProcessStdin });
  if (argv[0] === 'setup') return runSetupCommand(argv.slice(1), env, io);
  let json = argv.includes('--json');
  const program = io.program ?? 'agentrelay';
  try {
    // The worker has options of its own; it is dispatched before the shared option parsing.
    if (argv[0] === 'worker') return await runWorkerCommand(argv.slice(1), env, io);
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw usage((error as Error).message);
    }
    const { values, positionals } = parsed;
    json = values.json === true;
    if (values.help || positionals.length === 0 || positionals[0] === 'help') {
      io.stdout(USAGE.replace('Usage: agentrelay', `Usage: ${program}`));
      return positionals.length === 0 && !values.help ? EXIT.usage : EXIT.ok;
    }
    const [command, ...rest] = positionals;
    // `show <handle>` is the admin command, `show <task id>` the agent's (handles have an @, task ids never).
    if ((AGENT_COMMANDS as readonly string[]).includes(command) && !(command === 'show' && rest[0]?.includes('@'))) {
      return await runAgentCommand(command as AgentCommand, rest, values, env, {
        stdout: io.stdout,
        stderr: io.stderr,
        readFile: io.readFile ?? ((path: string) => readFile(path, 'utf8')),
        program,
        ...(io.signal ? { signal: io.signal } : {}),
      });
    }
    const baseUrl = values.url ?? env.RELAY_URL ?? 'http://127.0.0.1:8080';
    const token = values.token ?? env.RELAY_ADMIN_TOKEN;
    if (!token) throw new CliError('No admin token: set RELAY_ADMIN_TOKEN or pass --token.', EXIT.usage);
    const api = new AdminApi(baseUrl, token);
    const print = (value: unknown, human: string): void => io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : human);

    switch (command) {
      case 'register': {
        const handle = need(rest, 0, 'the handle (name@org)');
        if (values.name === undefined) throw usage('register needs --name.');
        const upstream = await upstreamFields(values, io);
        const created = await api.call<{ agent: AgentRecord; api_key: string; webhook_secret: string | null }>('POST', '/admin/agents', {
          handle,
          ...agentFields(values),
          ...(upstream ? { upstream } : {}),
        });
        print(
          created,
          `Registered ${created.agent.handle} (${created.agent.id}).\n` +
            (created.agent.upstream
              ? `Upstream A2A server: ${created.agent.upstream.url} (${created.agent.upstream.binding}, A2A ${created.agent.upstream.protocol_version}, auth ${created.agent.upstream.auth_scheme})\n`
              : '') +
            `API key (shown once, store it now): ${created.api_key}\n` +
            (created.webhook_secret ? `Webhook signing secret (shown once): ${created.webhook_secret}\n` : ''),
        );
        return EXIT.ok;
      }
      case 'agents': {
        const action = rest[0];
        if (action !== undefined) return await upstreamCommand(api, action, need(rest, 1, 'the handle'), values, io, print);
        const limit = values.limit ? Number(values.limit) : undefined;
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 200)) throw usage('--limit must be an integer from 1 to 200.');
        const items: AgentRecord[] = [];
        let cursor: string | null = null;
        do {
          const query = new URLSearchParams({
            limit: String(limit ?? 200),
            ...(values.all ? { include_disabled: 'true' } : {}),
            ...(cursor ? { cursor } : {}),
          });
          const page: AgentPage = await api.call<AgentPage>('GET', `/admin/agents?${query}`);
          items.push(...page.items);
          cursor = limit === undefined ? page.next_cursor : null;
        } while (cursor);
        print(
          { items },
          items.length === 0
            ? 'No agents.\n'
            : table([
                ['HANDLE', 'NAME', 'ROLE', 'SKILLS', 'STATUS'],
                ...items.map((agent) => [agent.handle, agent.name, agent.role ?? '-', agent.skills.join(',') || '-', agent.disabled ? 'disabled' : 'active']),
              ]),
        );
        return EXIT.ok;
      }
      case 'show': {
        const agent = await api.call<AgentRecord>('GET', agentPath(need(rest, 0, 'the handle')));
        print(agent, describeAgent(agent));
        return EXIT.ok;
      }
      case 'update': {
        const fields = agentFields(values);
        if (Object.keys(fields).length === 0) throw usage('update needs at least one field option.');
        const agent = await api.call<AgentRecord>('PATCH', agentPath(need(rest, 0, 'the handle')), fields);
        print(agent, describeAgent(agent));
        return EXIT.ok;
      }
      case 'disable': {
        const agent = await api.call<AgentRecord>('DELETE', agentPath(need(rest, 0, 'the handle')));
        print(agent, `Disabled ${agent.handle}: its keys no longer work.\n`);
        return EXIT.ok;
      }
      case 'keys': {
        const action = need(rest, 0, 'the keys action (list, rotate or revoke)');
        const handle = need(rest, 1, 'the handle');
        if (action === 'list') {
          const keys = await api.call<ApiKeyList>('GET', agentPath(handle, '/keys'));
          print(keys, keyRows(keys.items));
          return EXIT.ok;
        }
        if (action === 'rotate') {
          const before = values['revoke-old'] ? await api.call<ApiKeyList>('GET', agentPath(handle, '/keys')) : { items: [] };
          const created = await api.call<CreateKeyReply>('POST', agentPath(handle, '/keys'));
          const revoked: ApiKeyInfo[] = [];
          for (const key of before.items.filter((item) => item.revoked_at === null)) {
            revoked.push(await api.call<ApiKeyInfo>('DELETE', agentPath(handle, `/keys/${encodeURIComponent(key.prefix)}`)));
          }
          print(
            { ...created, revoked },
            `New API key for ${handle} (shown once, store it now): ${created.api_key}\n` +
              (revoked.length ? `Revoked: ${revoked.map((key) => key.prefix).join(', ')}\n` : 'Older keys still work until you revoke them.\n'),
          );
          return EXIT.ok;
        }
        if (action === 'revoke') {
          const prefix = need(rest, 2, 'the key prefix (ah_live_XXXXXXXX)');
          const key = await api.call<ApiKeyInfo>('DELETE', agentPath(handle, `/keys/${encodeURIComponent(prefix)}`));
          print(key, `Revoked ${key.prefix} of ${handle}.\n`);
          return EXIT.ok;
        }
        throw usage(`Unknown keys action "${action}".`);
      }
      case 'trust': {
        const action = need(rest, 0, 'the trust action (apply or show)');
        if (action === 'apply') {
          const file = need(rest, 1, 'the trust.yaml file');
          let text: string;
          try {
            text = await (io.readFile ?? ((path: string) => readFile(path, 'utf8')))(file);
          } catch (error) {
            throw new CliError(`Cannot read ${file}: ${(error as Error).message}`, EXIT.usage);
          }
          let document: unknown;
          try {
            document = parseYaml(text);
          } catch (error) {
            throw new CliError(`${file} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, EXIT.usage);
          }
          const fields = typeof document === 'object' && document !== null && !Array.isArray(document) ? (document as Record<string, unknown>) : {};
          const handle = values.agent ?? (typeof fields.agent === 'string' ? fields.agent : undefined);
          if (!handle) throw usage(`${file} names no agent: add "agent: <handle>" to it or pass --agent <handle>.`);
          // The relay replaces the whole policy: a list the file leaves out would be emptied, rules
          // and all, so a file written before a list existed (or cut short) is refused.
          const dropped = listsItWouldDrop(fields, await api.call<TrustPolicy>('GET', agentPath(handle, '/trust')));
          if (dropped.length > 0) {
            throw new CliError(
              `${file} leaves out lists the policy of ${handle} has; applying it would remove them:\n` +
                dropped.map((line) => `  ${line}\n`).join('') +
                `Copy them from "${program} trust show ${handle}", or write each as an empty list (e.g. hold: []) to remove it.`,
              EXIT.usage,
            );
          }
          const policy = await api.call<TrustPolicy>('PUT', agentPath(handle, '/trust'), text, 'application/yaml');
          print(policy, `Applied the trust policy of ${policy.handle}:\n${trustYaml(policy)}`);
          return EXIT.ok;
        }
        if (action === 'show') {
          const policy = await api.call<TrustPolicy>('GET', agentPath(need(rest, 1, 'the handle'), '/trust'));
          print(policy, trustYaml(policy));
          return EXIT.ok;
        }
        throw usage(`Unknown trust action "${action}".`);
      }
      case 'webhook-secret': {
        if (rest[0] !== 'rotate') throw usage(`Usage: ${program} webhook-secret rotate <handle>`);
        const reply = await api.call<{ handle: string; webhook_secret: string }>('POST', agentPath(need(rest, 1, 'the handle'), '/webhook-secret'));
        print(reply, `New webhook signing secret for ${reply.handle} (shown once): ${reply.webhook_secret}\n`);
        return EXIT.ok;
      }
      case 'deliveries': {
        const query = new URLSearchParams({
          ...(values.status ? { status: values.status } : {}),
          ...(values.task ? { task_id: values.task } : {}),
          ...(values.limit ? { limit: values.limit } : {}),
        });
        const reply = await api.call<ListDeliveriesReply>('GET', `/admin/deliveries${query.size ? `?${query}` : ''}`);
        print(
          reply,
          reply.deliveries.length === 0
            ? 'No deliveries.\n'
            : table([
                ['ID', 'EVENT', 'CHANNEL', 'TARGET', 'STATUS', 'ATTEMPTS', 'LAST ERROR'],
                ...reply.deliveries.map((delivery) => [
                  delivery.id,
                  delivery.event,
                  delivery.channel,
                  `${delivery.target_handle} ${delivery.target_host}`,
                  delivery.status,
                  String(delivery.attempts),
                  delivery.last_error ?? (delivery.last_status_code ? String(delivery.last_status_code) : '-'),
                ]),
              ]),
        );
        return EXIT.ok;
      }
      case 'redeliver': {
        const id = need(rest, 0, 'the delivery id');
        const delivery = await api.call<DeliveryView>('POST', `/admin/deliveries/${encodeURIComponent(id)}/redeliver`);
        print(delivery, `Delivery ${delivery.id} is ${delivery.status} again.\n`);
        return EXIT.ok;
      }
      case 'approvals':
        return await runApprovalsCommand(api, rest, values, print, program);
      case 'orgs':
        await runOrgsCommand(api, rest, values, print);
        return EXIT.ok;
      default:
        throw usage(`Unknown command "${command}".`);
    }
  } catch (error) {
    if (error instanceof CliError) {
      const message = error.message.replace(USAGE_HINT, `Run "${program} --help" for usage.`);
      io.stderr(json ? `${JSON.stringify({ error: error.body ?? { message }, exit_code: error.exitCode })}\n` : `agentrelay: ${message}\n`);
      return error.exitCode;
    }
    io.stderr(`agentrelay: ${(error as Error).message}\n`);
    return EXIT.apiError;
  }
}
