import { readFileSync } from 'node:fs';
import semver from 'semver';

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockedPackage> };

describe('the Node.js version the README names', () => {
  const oldestNode = semver.minVersion(manifest.engines.node);

  it('is the oldest one package.json allows', () => {
    expect(oldestNode?.version).toBe('20.19.0');
    expect(readFileSync('README.md', 'utf8')).toContain('Node.js 20.19+');
  });

  // npm warns at every install about a package whose engines exclude the running Node.js.
  it('satisfies every installed package that names the Node.js versions it runs on', () => {
    const excluding = Object.entries(lock.packages)
      .filter(([path, locked]) => path !== '' && !Array.isArray(locked.engines) && locked.engines?.node !== undefined)
      .filter(([, locked]) => !semver.satisfies(oldestNode!, (locked.engines as { node: string }).node))
      .map(([path, locked]) => `${path.replace(/^node_modules\//, '')}@${locked.version} wants node ${(locked.engines as { node: string }).node}`);
    expect(excluding).toEqual([]);
  });
});
