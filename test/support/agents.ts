import request from 'supertest';
import type { AgentRecord, ApiKeyInfo, TrustPolicy } from '@app/contracts';
import { TEST_ADMIN_TOKEN, type RelayHarness } from './relay-harness';

export interface RegisterAgentInput {
  handle: string;
  name: string;
  role?: string;
  description?: string;
  skills?: string[];
  metadata?: Record<string, unknown>;
  input_modes?: string[];
  email?: string;
  /** The owner's account at the console's OpenID Provider (its issuer the console's when left out). */
  owner?: { issuer?: string; subject: string };
  notification_webhook_url?: string;
  slack_webhook_url?: string;
}

export interface RegisteredTestAgent {
  agent: AgentRecord;
  api_key: string;
  key: ApiKeyInfo;
  webhook_secret: string | null;
}

/** Registers an agent through the admin API (`POST /admin/agents`) and returns it with its key. */
export async function registerAgent(relay: RelayHarness, input: RegisterAgentInput): Promise<RegisteredTestAgent> {
  const response = await request(relay.url).post('/admin/agents').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).send(input);
  if (response.status !== 201) throw new Error(`registering ${input.handle} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as RegisteredTestAgent;
}

/** Replaces an agent's trust policy through the admin API. */
export async function setTrust(relay: RelayHarness, handle: string, policy: { allow?: string[]; block?: string[] }): Promise<TrustPolicy> {
  const response = await request(relay.url)
    .put(`/admin/agents/${encodeURIComponent(handle)}/trust`)
    .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
    .send(policy);
  if (response.status !== 200) throw new Error(`setting the trust policy of ${handle} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as TrustPolicy;
}

/** A handle no other test uses: `<name>-<random>@<org>`. */
export function uniqueHandle(name: string, org: string): string {
  return `${name}-${Math.random().toString(36).slice(2, 8)}@${org}`;
}
