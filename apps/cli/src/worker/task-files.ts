import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { TASK_LIMITS } from '@app/contracts/model';
import type { TaskArtifact, TaskMessage, Task } from '@app/relay-client';

/** What a run's command gets on stdin and in `handoff.json`. */
export interface HandoffInput {
  task_id: string;
  sender: Task['sender'];
  recipient: string;
  intent: Task['intent'];
  /** The handoff's first message. */
  text: string;
  proposed_action: Task['proposed_action'];
  /** The task's artifacts; those with content carry `file`, where the worker wrote it (relative to the task directory). */
  artifacts: Array<Record<string, unknown> & { file?: string }>;
  /** All the task's messages, oldest first (the worker's own messages included). */
  messages: Array<Pick<TaskMessage, 'id' | 'sequence_no' | 'from' | 'body' | 'created_at'>>;
  /** 1 for the first run, 2 for the run after the sender's first answer, … */
  run: number;
  /** On a run after a question: what the sender wrote since it (else null). */
  answer: string | null;
  task_dir: string;
  artifacts_dir: string;
}

export const INPUT_FILE = 'handoff.json';
export const INPUT_DIR = 'input';
export const ARTIFACTS_DIR = 'artifacts';

/** A file name made of the safe characters of `name`. */
function safeName(name: string, fallback: string): string {
  const cleaned = basename(name)
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 120);
  return cleaned === '' ? fallback : cleaned;
}

/** The content of an artifact as a file: a diff as `.diff`, a contract as its spec, an A2A artifact's parts. */
function artifactFile(artifact: Task['artifacts'][number], index: number): { name: string; content: Buffer } | null {
  const prefix = String(index + 1).padStart(2, '0');
  if (artifact.type !== null) {
    const typed = artifact as TaskArtifact;
    if (typed.type === 'file_diff') return { name: `${prefix}-${safeName(typed.path, 'change')}.diff`, content: Buffer.from(typed.diff) };
    if (typed.type === 'api_contract') {
      const extension = typed.format && /^[a-z0-9]{1,10}$/i.test(typed.format) ? typed.format.toLowerCase() : 'txt';
      return { name: `${prefix}-${safeName(typed.name, 'contract')}.${extension}`, content: Buffer.from(typed.spec) };
    }
    return null;
  }
  const parts = (artifact.parts ?? []) as Array<{ type: string; text?: string; data?: unknown; file?: { name?: string; bytes?: string } }>;
  const name = safeName(String(artifact.name ?? artifact.artifact_id ?? 'artifact'), 'artifact');
  const files = parts.filter((part) => part.type === 'file' && part.file?.bytes !== undefined);
  if (files.length === 1 && parts.length === 1) {
    return { name: `${prefix}-${safeName(files[0].file?.name ?? name, name)}`, content: Buffer.from(files[0].file?.bytes ?? '', 'base64') };
  }
  const texts = parts.filter((part) => part.type === 'text').map((part) => part.text ?? '');
  if (texts.length === parts.length && texts.length > 0)
    return { name: `${prefix}-${extname(name) ? name : `${name}.txt`}`, content: Buffer.from(texts.join('\n')) };
  if (parts.length > 0) return { name: `${prefix}-${name}.json`, content: Buffer.from(JSON.stringify(parts, null, 2)) };
  return null;
}

/**
 * Writes a run's input into its fresh directory: `handoff.json`, the artifacts' contents under
 * `input/`, and an empty `artifacts/` for what the command hands back.
 */
export async function writeTaskFiles(dir: string, task: Task, run: number, answer: string | null): Promise<HandoffInput> {
  await mkdir(join(dir, INPUT_DIR), { recursive: true });
  await mkdir(join(dir, ARTIFACTS_DIR), { recursive: true });
  const artifacts: HandoffInput['artifacts'] = [];
  for (const [index, artifact] of task.artifacts.entries()) {
    const file = artifactFile(artifact, index);
    const entry: HandoffInput['artifacts'][number] = { ...(artifact as Record<string, unknown>) };
    if (file) {
      await writeFile(join(dir, INPUT_DIR, file.name), file.content);
      entry.file = `${INPUT_DIR}/${file.name}`;
    }
    artifacts.push(entry);
  }
  const input: HandoffInput = {
    task_id: task.task_id,
    sender: task.sender,
    recipient: task.recipient,
    intent: task.intent,
    text: task.messages[0]?.body ?? task.summary,
    proposed_action: task.proposed_action,
    artifacts,
    messages: task.messages.map(({ id, sequence_no, from, body, created_at }) => ({ id, sequence_no, from, body, created_at })),
    run,
    answer,
    task_dir: dir,
    artifacts_dir: join(dir, ARTIFACTS_DIR),
  };
  await writeFile(join(dir, INPUT_FILE), `${JSON.stringify(input, null, 2)}\n`);
  return input;
}

/** An artifact of `tasks/complete` (A2A v0.3 shape). */
export interface OutputArtifact {
  artifactId: string;
  name: string;
  parts: Array<{ kind: 'text'; text: string } | { kind: 'file'; file: { name: string; mimeType: string; bytes: string } }>;
}

export interface CollectedArtifacts {
  artifacts: OutputArtifact[];
  /** Files that were left out, each with why. */
  skipped: string[];
}

const MEDIA_TYPES: Record<string, string> = {
  '.diff': 'text/x-diff',
  '.patch': 'text/x-diff',
  '.json': 'application/json',
  '.md': 'text/markdown',
  '.html': 'text/html',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.pdf': 'application/pdf',
};

/** What an artifact adds to the task's artifact bytes (as the relay counts them: parts as JSON, and the name). */
export function artifactSize(artifact: OutputArtifact): number {
  const parts = artifact.parts.map((part) =>
    part.kind === 'text'
      ? { kind: 'text', text: part.text }
      : { kind: 'file', file: { name: part.file.name, mime_type: part.file.mimeType, bytes: part.file.bytes } },
  );
  return Buffer.byteLength(JSON.stringify(parts)) + Buffer.byteLength(artifact.name) + Buffer.byteLength('{}') * 2;
}

/** The bytes and count a task's artifacts already take, as near as the client can tell (rather more than less). */
export function heldArtifacts(task: Pick<Task, 'artifacts'>): { count: number; bytes: number } {
  return { count: task.artifacts.length, bytes: task.artifacts.reduce((sum, artifact) => sum + Buffer.byteLength(JSON.stringify(artifact)), 0) };
}

async function listFiles(root: string, dir: string = root): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(root, path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/**
 * The files under `artifacts/` as artifacts (text files as text, others as bytes), as many as fit
 * the task's caps beside what it holds (`TASK_LIMITS.artifactsPerTask`, `artifactBytesPerTask`,
 * `artifactsPerRequest`), in name order; the rest are named in `skipped`.
 */
export async function collectArtifacts(dir: string, held: { count: number; bytes: number }): Promise<CollectedArtifacts> {
  const root = join(dir, ARTIFACTS_DIR);
  const artifacts: OutputArtifact[] = [];
  const skipped: string[] = [];
  let bytes = held.bytes;
  const countLimit = Math.min(TASK_LIMITS.artifactsPerRequest, TASK_LIMITS.artifactsPerTask - held.count);
  for (const path of await listFiles(root)) {
    const name = relative(root, path).split('\\').join('/');
    if (name.length > TASK_LIMITS.artifactNameChars) {
      skipped.push(`${name.slice(0, 80)}… (name too long)`);
      continue;
    }
    const size = (await stat(path)).size;
    if (size > TASK_LIMITS.artifactBytesPerTask) {
      skipped.push(`${name} (${size} bytes: over the ${TASK_LIMITS.artifactBytesPerTask} bytes a thread's artifacts hold)`);
      continue;
    }
    const content = await readFile(path);
    const text = content.toString('utf8');
    const isText = !content.includes(0) && Buffer.from(text, 'utf8').equals(content) && text.length <= TASK_LIMITS.textPartChars;
    const artifact: OutputArtifact = {
      artifactId: `worker-${name}`.slice(0, TASK_LIMITS.artifactIdChars),
      name,
      parts: isText
        ? [{ kind: 'text', text }]
        : [
            {
              kind: 'file',
              file: {
                name: basename(name),
                mimeType: MEDIA_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
                bytes: content.toString('base64'),
              },
            },
          ],
    };
    const adds = artifactSize(artifact);
    if (artifacts.length >= countLimit) {
      skipped.push(`${name} (the thread holds at most ${TASK_LIMITS.artifactsPerTask} artifacts, ${TASK_LIMITS.artifactsPerRequest} per call)`);
    } else if (bytes + adds > TASK_LIMITS.artifactBytesPerTask) {
      skipped.push(`${name} (${size} bytes: the thread's artifacts would pass ${TASK_LIMITS.artifactBytesPerTask} bytes)`);
    } else {
      artifacts.push(artifact);
      bytes += adds;
    }
  }
  return { artifacts, skipped };
}
