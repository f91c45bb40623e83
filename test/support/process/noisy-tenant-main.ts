// A noisy tenant as a process of its own: closed loops of agent calls over keep-alive connections,
// as a real client hammering the relay would send them. Started by NoisyTenant (../noisy-tenant.ts),
// which turns the loops on and off over the IPC channel and reads what they were answered.
import { Agent, request } from 'node:http';

interface Settings {
  url: string;
  apiKeys: string[];
  loopsPerKey: number;
  method: string;
  params: unknown;
}

const settings = JSON.parse(process.env.NOISY_TENANT_SETTINGS ?? '{}') as Settings;
const target = new URL('/a2a', settings.url);
const agent = new Agent({ keepAlive: true, maxSockets: settings.apiKeys.length * settings.loopsPerKey });
const body = JSON.stringify({ jsonrpc: '2.0', id: 'noise', method: settings.method, params: settings.params });

let running = false;
let statuses: Record<string, number> = {};
let loops: Array<Promise<void>> = [];
let refusedSinceStart = false;

function call(apiKey: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      target,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function loop(apiKey: string): Promise<void> {
  while (running) {
    let status: string;
    try {
      status = String(await call(apiKey));
    } catch {
      status = 'error';
    }
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === '429' && !refusedSinceStart) {
      refusedSinceStart = true;
      process.send?.({ event: 'refusing' });
    }
  }
}

process.on('message', (message: { command: 'start' | 'stop' }) => {
  if (message.command === 'start' && !running) {
    running = true;
    statuses = {};
    refusedSinceStart = false;
    loops = settings.apiKeys.flatMap((apiKey) => Array.from({ length: settings.loopsPerKey }, () => loop(apiKey)));
  } else if (message.command === 'stop') {
    running = false;
    void Promise.all(loops).then(() => process.send?.({ event: 'stopped', statuses }));
  }
});
process.on('disconnect', () => {
  running = false;
  agent.destroy();
  process.exit(0);
});
process.send?.({ event: 'ready' });
