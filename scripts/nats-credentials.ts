import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeAccount, encodeActivation, encodeOperator, encodeUser, fmtCreds, type Export, type Import } from '@nats-io/jwt';
import { nkeys } from '@nats-io/transport-node';
import {
  authorizationConfig,
  eventConsumerPermissions,
  RELAY_NATS_ROLES,
  relayAccountName,
  relayNatsPermissions,
  relayPermissionsConfig,
  withPermissionTable,
  type NatsPermissions,
  type NatsUserEntry,
  type RelayNatsRole,
} from '@app/messaging';

export const USAGE = `npm run nats:credentials -- [--dir DIR] [--prefix PREFIX] [--consumer NAME]... [--rotate HOLDER]... [--retire]
npm run nats:credentials -- --operator [--dir DIR] [--prefix PREFIX] [--consumer NAME]...

Writes the NATS users of one relay deployment, from the relay's permission table:
  DIR/permissions.conf            what each service may publish and subscribe to (for PREFIX)
  DIR/credentials/auth.conf       the accounts: the services' users in the relay's account, each consumer's
                                  user in an account of its own that imports its subjects alone
  DIR/credentials/<holder>.nk     each one's nkey seed (secret; mount it as NATS_NKEY_SEED_FILE)
Holders: edge, tasks, directory, notifier, and consumer-NAME for each --consumer (read-only event
consumers, each bound to its durable consumer NAME). Seeds already there are kept.
  --rotate HOLDER   new seed for HOLDER; the old one stays valid (HOLDER.previous.nk) until --retire
  --retire          drop every previous seed from auth.conf
  --write-shipped   rewrite the checked-in files made from the table (docker/nats/permissions.conf,
                    the table in docs/nats-security.md) after a change to it
DIR defaults to docker/nats (the compose file's NATS), PREFIX to "" (NATS_SUBJECT_PREFIX).

--operator writes decentralized auth instead, in the formats nsc uses: an operator, one account
for the relay (JetStream on), one per consumer (importing its subjects from the relay's) and the
system account, a user JWT per holder carrying the same permissions, each as
DIR/credentials/<holder>.creds (mount it as NATS_CREDS_FILE), and DIR/credentials/operator.conf
for nats-server (operator, resolver MEMORY, the accounts preloaded). The operator's and accounts'
seeds are kept in DIR/credentials/ to sign more users later; keep them secret.`;

export interface CredentialOptions {
  dir: string;
  subjectPrefix: string;
  consumers: string[];
  rotate: string[];
  retire: boolean;
}

/** The seed file of a holder (`edge`, `consumer-audit`), and of its previous seed during a rotation. */
export function seedFile(dir: string, holder: string, previous = false): string {
  return join(dir, 'credentials', `${holder}${previous ? '.previous' : ''}.nk`);
}

function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function publicKeyOf(path: string): string {
  return nkeys.fromSeed(new TextEncoder().encode(readFileSync(path, 'utf8').trim())).getPublicKey();
}

function newSeed(path: string): void {
  writeSecret(path, new TextDecoder().decode(nkeys.createUser().getSeed()) + '\n');
}

/** Writes (or brings up to date) the permissions, users and seeds of one deployment; returns the files written. */
export function writeNatsCredentials(options: CredentialOptions): string[] {
  const holders = holdersOf(options.subjectPrefix, options.consumers);
  for (const rotated of options.rotate) {
    if (!holders.some((holder) => holder.name === rotated))
      throw new Error(`--rotate ${rotated}: no such holder (${holders.map((holder) => holder.name).join(', ')})`);
  }
  mkdirSync(join(options.dir, 'credentials'), { recursive: true, mode: 0o700 });
  const written: string[] = [];
  const users: NatsUserEntry[] = [];
  for (const holder of holders) {
    const current = seedFile(options.dir, holder.name);
    const previous = seedFile(options.dir, holder.name, true);
    if (options.rotate.includes(holder.name) && existsSync(current)) {
      renameSync(current, previous);
      written.push(previous);
    }
    if (!existsSync(current)) {
      newSeed(current);
      written.push(current);
    }
    if (options.retire && existsSync(previous)) rmSync(previous);
    if (existsSync(previous)) users.push({ nkey: publicKeyOf(previous), permissions: holder.permissions });
    users.push({ nkey: publicKeyOf(current), permissions: holder.permissions });
  }
  const permissionsPath = join(options.dir, 'permissions.conf');
  writeFileSync(permissionsPath, relayPermissionsConfig(options.subjectPrefix));
  const authPath = join(options.dir, 'credentials', 'auth.conf');
  const consumerPermissions = holders.filter((holder) => holder.name.startsWith('consumer-')).map((holder) => holder.permissions);
  writeFileSync(authPath, authorizationConfig(users, options.subjectPrefix, consumerPermissions));
  written.push(permissionsPath, authPath);
  return written;
}

/** The files made from the table that are checked in: the compose NATS's permissions and the docs' table. */
export const SHIPPED_PERMISSIONS_FILE = 'docker/nats/permissions.conf';
export const PERMISSIONS_DOC = 'docs/nats-security.md';

function writeShipped(): string[] {
  writeFileSync(SHIPPED_PERMISSIONS_FILE, relayPermissionsConfig(''));
  writeFileSync(PERMISSIONS_DOC, withPermissionTable(readFileSync(PERMISSIONS_DOC, 'utf8')));
  return [SHIPPED_PERMISSIONS_FILE, PERMISSIONS_DOC];
}

type NkeyPair = ReturnType<typeof nkeys.createUser>;

function holdersOf(subjectPrefix: string, consumers: string[]): Array<{ name: string; permissions: NatsPermissions }> {
  return [
    ...RELAY_NATS_ROLES.map((role: RelayNatsRole) => ({ name: role, permissions: relayNatsPermissions(role, subjectPrefix) })),
    ...consumers.map((consumer) => ({ name: `consumer-${consumer}`, permissions: eventConsumerPermissions(consumer, subjectPrefix) })),
  ];
}

/** A key pair kept in `path` (its seed), made there when missing. */
function keptKey(path: string, create: () => NkeyPair): NkeyPair {
  if (!existsSync(path)) writeSecret(path, new TextDecoder().decode(create().getSeed()) + '\n');
  return nkeys.fromSeed(new TextEncoder().encode(readFileSync(path, 'utf8').trim()));
}

/** The `.creds` file of a holder in operator mode. */
export function credsFile(dir: string, holder: string): string {
  return join(dir, 'credentials', `${holder}.creds`);
}

/**
 * Decentralized auth for one deployment: an operator and the relay's account (kept), an account of
 * its own for each event consumer (kept) importing from the relay's account its subjects alone (each
 * export needs an activation token the relay's account signed for that consumer's account), and a
 * user JWT per holder with the table's permissions, written as `.creds`; operator.conf loads them in nats-server.
 */
export async function writeOperatorCredentials(options: Pick<CredentialOptions, 'dir' | 'subjectPrefix' | 'consumers'>): Promise<string[]> {
  const credentials = join(options.dir, 'credentials');
  mkdirSync(credentials, { recursive: true, mode: 0o700 });
  const operator = keptKey(join(credentials, 'operator.nk'), () => nkeys.createOperator());
  const account = keptKey(join(credentials, 'account.nk'), () => nkeys.createAccount());
  const unlimited = -1;
  const system = keptKey(join(credentials, 'system-account.nk'), () => nkeys.createAccount());
  const operatorJwt = await encodeOperator('agentrelay', operator, { system_account: system.getPublicKey() });
  const systemJwt = await encodeAccount('SYS', system, {}, { signer: operator });
  const holders = holdersOf(options.subjectPrefix, options.consumers);
  const exports: Export[] = [];
  const accountJwts = new Map<string, string>();
  const signers = new Map<string, NkeyPair>();
  for (const holder of holders) {
    const own = holder.permissions.account;
    if (!own) continue;
    const consumerAccount = keptKey(join(credentials, `${holder.name}.account.nk`), () => nkeys.createAccount());
    const imports: Import[] = [];
    for (const entry of own.imports) {
      exports.push({
        name: `${own.name} ${entry.localSubject}`,
        subject: entry.subject,
        type: 'service',
        token_req: true,
        ...(entry.responseType === 'stream' ? { response_type: 'Stream' as const } : {}),
      });
      const token = await encodeActivation(own.name, consumerAccount, account, 'service', { subject: entry.subject });
      imports.push({
        name: entry.localSubject,
        subject: entry.subject,
        account: account.getPublicKey(),
        type: 'service',
        token,
        local_subject: entry.localSubject,
      });
    }
    // No JetStream of its own (its limits 0), no exports: it reaches the relay's account through these imports alone.
    const consumerLimits = { imports: unlimited, exports: 0, wildcards: true, subs: unlimited, conn: unlimited, data: unlimited, payload: unlimited };
    accountJwts.set(consumerAccount.getPublicKey(), await encodeAccount(own.name, consumerAccount, { limits: consumerLimits, imports }, { signer: operator }));
    signers.set(holder.name, consumerAccount);
  }
  const accountJwt = await encodeAccount(
    relayAccountName(options.subjectPrefix),
    account,
    {
      limits: {
        mem_storage: unlimited,
        disk_storage: unlimited,
        streams: unlimited,
        consumer: unlimited,
        subs: unlimited,
        conn: unlimited,
        data: unlimited,
        payload: unlimited,
        imports: unlimited,
        exports: unlimited,
        wildcards: true,
      },
      ...(exports.length > 0 ? { exports } : {}),
    },
    { signer: operator },
  );
  accountJwts.set(account.getPublicKey(), accountJwt);
  accountJwts.set(system.getPublicKey(), systemJwt);
  const written: string[] = [];
  for (const holder of holders) {
    const user = nkeys.createUser();
    const { publish, subscribe, allowResponses } = holder.permissions;
    const jwt = await encodeUser(holder.name, user, signers.get(holder.name) ?? account, {
      pub: { allow: [...new Set(publish.map((grant) => grant.subject))] },
      sub: { allow: [...new Set(subscribe.map((grant) => grant.subject))] },
      ...(allowResponses ? { resp: { max: 1, ttl: 0 } } : {}),
    });
    const path = credsFile(options.dir, holder.name);
    writeSecret(path, new TextDecoder().decode(fmtCreds(jwt, user)));
    written.push(path);
  }
  const conf = join(credentials, 'operator.conf');
  writeFileSync(
    conf,
    [
      '# Decentralized auth of one relay deployment, written by `npm run nats:credentials -- --operator`.',
      `operator: ${JSON.stringify(operatorJwt)}`,
      '# A user JWT carries its permissions: the edge’s CONNECT line is longer than the default 4 KB.',
      'max_control_line: 64KB',
      `system_account: ${system.getPublicKey()}`,
      'resolver: MEMORY',
      'resolver_preload: {',
      ...[...accountJwts].map(([key, jwt]) => `  ${key}: ${JSON.stringify(jwt)}`),
      '}',
      '',
    ].join('\n'),
  );
  written.push(conf);
  return written;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: 'docker/nats' },
      prefix: { type: 'string', default: '' },
      consumer: { type: 'string', multiple: true, default: [] },
      rotate: { type: 'string', multiple: true, default: [] },
      retire: { type: 'boolean', default: false },
      operator: { type: 'boolean', default: false },
      'write-shipped': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values['write-shipped']) {
    for (const path of writeShipped()) console.log(`wrote ${path}`);
    return;
  }
  const written = values.operator
    ? await writeOperatorCredentials({ dir: values.dir, subjectPrefix: values.prefix, consumers: values.consumer })
    : writeNatsCredentials({ dir: values.dir, subjectPrefix: values.prefix, consumers: values.consumer, rotate: values.rotate, retire: values.retire });
  for (const path of written) console.log(`wrote ${path}`);
  console.log('Reload NATS to apply (nats-server --signal reload, or SIGHUP); each service reads its seed again when it reconnects.');
}

if (process.argv[1] && /nats-credentials\.[jt]s$/.test(process.argv[1])) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
