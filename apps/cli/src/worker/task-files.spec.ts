import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TASK_LIMITS } from '@app/contracts/model';
import type { Task } from '@app/relay-client';
import { artifactSize, collectArtifacts, writeTaskFiles } from './task-files';

function taskOf(artifacts: Task['artifacts']): Task {
  return {
    task_id: '01JTASK',
    thread_id: '01JTASK',
    status: { state: 'accepted' },
    sender: { handle: 'bob@acme', name: 'Bob', role: null },
    recipient: 'frank@acme',
    summary: 'Fix it',
    intent: 'inform',
    artifacts,
    proposed_action: null,
    messages: [{ id: 'm1', sequence_no: 1, from: 'bob@acme', body: 'Fix it', payload: {}, created_at: '2026-01-01T00:00:00Z' }],
    message_count: 1,
    has_more_messages: false,
    next_after_sequence_no: null,
    result_summary: null,
    reason: null,
    accepted_at: null,
    completed_at: null,
    cancelled_at: null,
    failed_at: null,
    rejected_at: null,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  };
}

describe('task files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'worker-files-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("writes the handoff's artifacts with content as files and names them in handoff.json", async () => {
    const input = await writeTaskFiles(
      dir,
      taskOf([
        { type: 'file_diff', path: 'src/api/users.ts', diff: '+x\n' },
        { type: 'test_command', command: 'npm test' },
        { type: 'api_contract', name: 'users api', spec: 'openapi: 3.1.0\n', format: 'yaml' },
        { type: null, artifact_id: 'a1', name: '../../etc/report', parts: [{ type: 'text', text: 'hello' }] },
        { type: null, artifact_id: 'a2', name: 'logo', parts: [{ type: 'file', file: { name: 'logo.png', bytes: Buffer.from('PNG').toString('base64') } }] },
      ]),
      1,
      null,
    );
    expect(input.artifacts.map((artifact) => artifact.file)).toEqual([
      'input/01-users.ts.diff',
      undefined,
      'input/03-users_api.yaml',
      'input/04-report.txt',
      'input/05-logo.png',
    ]);
    expect(await readFile(join(dir, 'input/01-users.ts.diff'), 'utf8')).toBe('+x\n');
    expect(await readFile(join(dir, 'input/05-logo.png'), 'utf8')).toBe('PNG');
    const written = JSON.parse(await readFile(join(dir, 'handoff.json'), 'utf8'));
    expect(written).toMatchObject({ task_id: '01JTASK', text: 'Fix it', run: 1, answer: null, artifacts_dir: join(dir, 'artifacts') });
  });

  it('collects artifacts/ in name order while they fit the task, and names what does not', async () => {
    await mkdir(join(dir, 'artifacts', 'sub'), { recursive: true });
    await writeFile(join(dir, 'artifacts', 'a.diff'), '--- a\n+++ b\n');
    await writeFile(join(dir, 'artifacts', 'sub', 'b.bin'), Buffer.from([0, 1, 2, 255]));
    await writeFile(join(dir, 'artifacts', 'c.txt'), 'x'.repeat(200 * 1024));
    const collected = await collectArtifacts(dir, { count: 0, bytes: 250 * 1024 });
    expect(collected.artifacts.map((artifact) => artifact.name)).toEqual(['a.diff', 'sub/b.bin']);
    expect(collected.artifacts[0].parts).toEqual([{ kind: 'text', text: '--- a\n+++ b\n' }]);
    expect(collected.artifacts[1].parts).toEqual([{ kind: 'file', file: { name: 'b.bin', mimeType: 'application/octet-stream', bytes: 'AAEC/w==' } }]);
    expect(collected.skipped).toEqual([`c.txt (${200 * 1024} bytes: the thread's artifacts would pass ${TASK_LIMITS.artifactBytesPerTask} bytes)`]);
  });

  it('leaves out files past the count the task still takes', async () => {
    await mkdir(join(dir, 'artifacts'), { recursive: true });
    await writeFile(join(dir, 'artifacts', 'one.txt'), '1');
    await writeFile(join(dir, 'artifacts', 'two.txt'), '2');
    const collected = await collectArtifacts(dir, { count: TASK_LIMITS.artifactsPerTask - 1, bytes: 0 });
    expect(collected.artifacts.map((artifact) => artifact.name)).toEqual(['one.txt']);
    expect(collected.skipped[0]).toMatch(/^two\.txt \(the thread holds at most 100 artifacts/);
  });

  it('sizes an artifact as the relay counts it, or more', () => {
    const artifact = { artifactId: 'x', name: 'a.txt', parts: [{ kind: 'text' as const, text: 'hello' }] };
    expect(artifactSize(artifact)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify([{ kind: 'text', text: 'hello' }])) + 'a.txt'.length);
  });
});
