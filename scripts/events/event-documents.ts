import 'reflect-metadata';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { eventJsonSchema, eventSchemaFileName, RELAY_EVENT_KINDS } from '@app/contracts';
import { DEFAULT_EVENTS_PUBLIC_URL, eventAsyncApiDocument } from '@app/messaging';

/** Where the generated event documents are checked in (linked from docs/events.md). */
export const EVENT_DOCUMENTS_DIR = join('docs', 'events');

export const USAGE = `npm run events:documents [-- --check]

Writes, from the event payloads' one description in libs/contracts/src/events/:
  docs/events/asyncapi.json              the AsyncAPI 3.0 document of the relay's NATS events
  docs/events/schemas/<name>.v<N>.json   a JSON Schema per event type and version
  --check   writes nothing; exits 1 naming each file that differs from what the code makes`;

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Every generated file (path relative to the repository) with its content, for the default deployment. */
export function eventDocumentFiles(): Map<string, string> {
  const files = new Map<string, string>();
  files.set(join(EVENT_DOCUMENTS_DIR, 'asyncapi.json'), json(eventAsyncApiDocument({ publicUrl: DEFAULT_EVENTS_PUBLIC_URL, subjectPrefix: '' })));
  for (const kind of RELAY_EVENT_KINDS) files.set(join(EVENT_DOCUMENTS_DIR, 'schemas', eventSchemaFileName(kind)), json(eventJsonSchema(kind)));
  return files;
}

function readOrNull(path: string): string | null {
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

/** The generated files that differ from what `root` holds, and the checked-in schemas the code no longer makes. */
export function driftedEventDocuments(root: string): string[] {
  const files = eventDocumentFiles();
  const drifted: string[] = [];
  for (const [path, content] of files) {
    if (readOrNull(join(root, path)) !== content) drifted.push(path);
  }
  const schemaDir = join(root, EVENT_DOCUMENTS_DIR, 'schemas');
  const present = existsSync(schemaDir) ? readdirSync(schemaDir) : [];
  for (const name of present) {
    const path = join(EVENT_DOCUMENTS_DIR, 'schemas', name);
    if (!files.has(path)) drifted.push(path);
  }
  return drifted;
}

export function writeEventDocuments(root: string): string[] {
  const written: string[] = [];
  for (const [path, content] of eventDocumentFiles()) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
    written.push(path);
  }
  return written;
}

function main(): void {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } } });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.check) {
    const drifted = driftedEventDocuments(process.cwd());
    for (const path of drifted) console.error(`${path} differs from the code: run npm run events:documents`);
    process.exit(drifted.length > 0 ? 1 : 0);
  }
  for (const path of writeEventDocuments(process.cwd())) console.log(`wrote ${path}`);
}

if (process.argv[1] && /event-documents\.[jt]s$/.test(process.argv[1])) main();
