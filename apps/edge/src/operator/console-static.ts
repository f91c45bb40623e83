import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';

/** The headers of every answer under `/console/`: the console runs no inline script or style and is never framed. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const HASHED_ASSETS = 'assets';
const IMMUTABLE = 'public, max-age=31536000, immutable';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

/** A path segment the console may name: no traversal, no hidden files, no separators or control characters once decoded. */
function isSafeSegment(segment: string): boolean {
  if (segment.startsWith('.') || segment.includes('/') || segment.includes('\\')) return false;
  for (let index = 0; index < segment.length; index++) if (segment.charCodeAt(index) < 0x20) return false;
  return true;
}

/**
 * The decoded segments of a path under `/console/`, or undefined when it tries to leave the
 * directory (`..`, encoded slashes or backslashes, dot files) or cannot be decoded.
 */
export function consolePathSegments(urlPath: string): string[] | undefined {
  const rest = urlPath.slice('/console/'.length);
  const segments: string[] = [];
  for (const raw of rest.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (!isSafeSegment(segment)) return undefined;
    segments.push(segment);
  }
  return segments;
}

/**
 * Serves the built console (`RELAY_CONSOLE_DIR`) under `/console/`: files as they are, `index.html`
 * for any other path (client-side routes) except under `/console/assets/`, where a missing file is
 * 404 (a hashed asset is cached for a year, so nothing else may be answered in its place).
 */
export function registerConsoleStatic(fastify: FastifyInstance, directory: string): void {
  const root = resolve(directory);
  const secure = (reply: FastifyReply): FastifyReply => reply.headers(CONSOLE_SECURITY_HEADERS);
  const notFound = (reply: FastifyReply, message: string): FastifyReply =>
    secure(reply).code(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(`${message}\n`);

  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const path = request.url.split('?')[0];
    if (path === '/console') return secure(reply).redirect('/console/', 301);
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot === undefined || !(await isFile(join(realRoot, 'index.html')))) {
      return notFound(reply, `The console is not built: run \`npm run build\` (it writes ${directory})`);
    }
    const segments = consolePathSegments(path);
    if (segments === undefined) return notFound(reply, 'Not found');
    const file = await insideRoot(realRoot, join(realRoot, ...segments));
    if (file !== undefined) return sendFile(secure(reply), file, segments[0] === HASHED_ASSETS && segments.length > 1 ? IMMUTABLE : 'no-cache');
    if (segments[0] === HASHED_ASSETS) return notFound(reply, 'Not found');
    return sendFile(secure(reply), join(realRoot, 'index.html'), 'no-cache');
  };
  fastify.get('/console', serve);
  fastify.get('/console/*', serve);
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

/** The file's real path when it is a regular file inside the root (symbolic links followed, then checked). */
async function insideRoot(realRoot: string, candidate: string): Promise<string | undefined> {
  const real = await realpath(candidate).catch(() => undefined);
  if (real === undefined || !real.startsWith(realRoot + sep)) return undefined;
  return (await isFile(real)) ? real : undefined;
}

function sendFile(reply: FastifyReply, file: string, cacheControl: string): FastifyReply {
  const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
  return reply.header('cache-control', cacheControl).type(type).send(createReadStream(file));
}
