import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { RelayHarness } from './support/relay-harness';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";
const SECRET = 'secret-outside-the-console-directory';
const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/app-3f2a1b.js"></script>';

/** A GET whose path goes out exactly as written (no client-side normalization of `..`). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const call = http.request({ host: hostname, port, path, method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
    });
    call.on('error', reject);
    call.end();
  });
}

function expectSecurityHeaders(headers: Record<string, unknown>): void {
  expect(headers['content-security-policy']).toBe(CSP);
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe('console API: the console served under /console/', () => {
  let relay: RelayHarness;
  let workspace: string;

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'console-static-'));
    const root = join(workspace, 'console');
    await mkdir(join(root, 'assets'), { recursive: true });
    await writeFile(join(root, 'index.html'), INDEX);
    await writeFile(join(root, 'assets', 'app-3f2a1b.js'), 'console.log("app");');
    await writeFile(join(root, 'assets', 'app-3f2a1b.css'), 'body { margin: 0 }');
    await writeFile(join(root, '.env'), SECRET);
    await writeFile(join(workspace, 'secret.txt'), SECRET);
    await symlink(join(workspace, 'secret.txt'), join(root, 'linked.txt'));
    relay = await RelayHarness.start({ services: [], env: { RELAY_CONSOLE_DIR: root } });
  });

  afterAll(async () => {
    await relay?.stop();
    await rm(workspace, { recursive: true, force: true });
  });

  it('redirects /console to /console/', async () => {
    const response = await request(relay.url).get('/console').expect(301);
    expect(response.headers.location).toBe('/console/');
  });

  it('answers index.html with no-cache and the security headers, for / and for client routes', async () => {
    for (const path of ['/console/', '/console/tasks/01JABCDEF', '/console/agents?handle=bob@acme']) {
      const response = await request(relay.url).get(path).expect(200);
      expect(response.text).toBe(INDEX);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-cache');
      expectSecurityHeaders(response.headers);
    }
    // A link that leads out of the directory is not one of its files: the client routes' index.html answers.
    // U+0000 is refused by the edge's input check before any route.
    expect((await rawGet(relay.url, '/console/%00index.html')).status).toBe(400);
    // A path that cannot be decoded is refused by the HTTP server itself.
    expect((await rawGet(relay.url, '/console/%E0%A4%A')).status).toBe(400);
    const linked = await rawGet(relay.url, '/console/linked.txt');
    expect([linked.status, linked.body]).toEqual([200, INDEX]);
  });

  it('answers hashed assets as immutable for a year, with their content type', async () => {
    const script = await request(relay.url).get('/console/assets/app-3f2a1b.js').expect(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expectSecurityHeaders(script.headers);
    const style = await request(relay.url).get('/console/assets/app-3f2a1b.css').expect(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    const missing = await request(relay.url).get('/console/assets/gone-000000.js').expect(404);
    expect(missing.headers['cache-control']).toBe('no-store');
    expectSecurityHeaders(missing.headers);
  });

  it('never answers a file outside the console directory, a dot file or a link out of it', async () => {
    for (const path of [
      '/console/../secret.txt',
      '/console/assets/../../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/..%2fsecret.txt',
      '/console/..%5csecret.txt',
      '/console/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/console/.env',
      '/console/%2eenv',
    ]) {
      const response = await rawGet(relay.url, path);
      expect(response.body).not.toContain(SECRET);
      expect([path, response.status, response.body.slice(0, 200)]).toEqual([path, 404, 'Not found\n']);
      expectSecurityHeaders(response.headers);
    }
  });

  it('answers 404 with a hint to build when the console directory is missing', async () => {
    const bare = await relay.startEdge({ RELAY_CONSOLE_DIR: join(workspace, 'not-built') });
    const response = await request(relay.urlOf(bare)).get('/console/').expect(404);
    expect(response.text).toMatch(/npm run build/);
    expectSecurityHeaders(response.headers);
  });
});
