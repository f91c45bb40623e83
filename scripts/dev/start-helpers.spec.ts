import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: plain ES modules of the dev scripts, without type declarations.
import { installDependencies, installedCount, lockedTopLevelPackages, progressLine } from './install.mjs';
// @ts-expect-error: as above.
import { serviceCredentials } from './service-credentials.mjs';

const SERVICES = ['directory', 'tasks', 'notifier', 'edge'];

describe("npm start's helpers", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'relay-start-helpers-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts the top-level packages of the lock file that are in node_modules', () => {
    const lock = { packages: { '': {}, 'node_modules/pg': {}, 'node_modules/@nats-io/kv': {}, 'node_modules/pg/node_modules/x': {}, 'node_modules/yaml': {} } };
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock));
    const packages = lockedTopLevelPackages(dir);
    expect(packages).toEqual(['pg', '@nats-io/kv', 'yaml']);
    expect(installedCount(dir, packages)).toBe(0);
    mkdirSync(join(dir, 'node_modules', 'pg'), { recursive: true });
    mkdirSync(join(dir, 'node_modules', '@nats-io', 'kv'), { recursive: true });
    expect(installedCount(dir, packages)).toBe(2);
    expect(progressLine(2, 3, 14)).toBe('Installing dependencies (npm ci): 2 of 3 packages, 14 s');
  });

  it('never runs npm ci through a linked node_modules (it would empty the shared folder)', async () => {
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    writeFileSync(join(dir, 'package-lock.json'), '{"packages":{}}');
    symlinkSync(shared, join(dir, 'node_modules'));
    await expect(installDependencies(dir, { output: { write: () => true } as unknown as NodeJS.WriteStream })).rejects.toThrow(
      `node_modules links to ${shared}, which is older than package-lock.json: install there (npm ci), not through the link`,
    );
  });

  it('gives each service its own seed (or .creds) from the credentials folder', () => {
    mkdirSync(join(dir, 'credentials'));
    for (const service of SERVICES) writeFileSync(join(dir, 'credentials', `${service}.nk`), 'SU…');
    const found = serviceCredentials(dir, SERVICES, {});
    expect(found.edge).toEqual({ NATS_NKEY_SEED_FILE: join(dir, 'credentials', 'edge.nk') });
    expect(found.notifier).toEqual({ NATS_NKEY_SEED_FILE: join(dir, 'credentials', 'notifier.nk') });
    rmSync(join(dir, 'credentials', 'tasks.nk'));
    writeFileSync(join(dir, 'tasks.creds'), 'jwt');
    expect(serviceCredentials(dir, SERVICES, {}).tasks).toEqual({ NATS_CREDS_FILE: join(dir, 'tasks.creds') });
  });

  it('names what is missing or in the way', () => {
    expect(() => serviceCredentials(join(dir, 'nope'), SERVICES, {})).toThrow(`--nats-credentials ${join(dir, 'nope')}: no such folder`);
    writeFileSync(join(dir, 'edge.nk'), 'SU…');
    expect(() => serviceCredentials(dir, SERVICES, {})).toThrow(`no credential for directory, tasks, notifier`);
    expect(() => serviceCredentials(dir, SERVICES, { NATS_NKEY_SEED_FILE: '/x' })).toThrow('unset NATS_NKEY_SEED_FILE');
  });
});
