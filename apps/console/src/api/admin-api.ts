import { ApiError } from './api-error';
import type {
  AgentPage,
  ApprovalDecision,
  AgentCardFields,
  AgentCounts,
  AgentRecord,
  ApiKeyInfo,
  CreatedKey,
  DeliveryDetail,
  DeliveryStatus,
  DeliveryView,
  NewAgent,
  NewOrg,
  OrgChanges,
  OrgPage,
  OrgPeoplePage,
  OrgRecord,
  NewUpstreamAgent,
  Overview,
  PendingToolPromptsReply,
  PermissionDecision,
  RegisteredAgent,
  SearchPage,
  SessionInfo,
  SignInMethods,
  TaskChainView,
  TaskDetail,
  TaskPage,
  TaskView,
  TrustPolicy,
  UpstreamCallView,
  UpstreamChangeDecision,
  UpstreamChangeDecisionReply,
  UpstreamRefreshReply,
  UpstreamStatusView,
} from './types';
import { TOOL_PROMPT_LIMITS } from './types';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface RequestOptions {
  query?: URLSearchParams;
  json?: unknown;
  yaml?: string;
}

const path = (value: string): string => encodeURIComponent(value);

/**
 * The one client of the admin API. The session cookie travels by itself (same origin, HttpOnly);
 * the CSRF token lives only in this object's memory and goes with every change.
 */
export class AdminApi {
  private csrfToken: string | null = null;
  private unauthorizedListener: (() => void) | null = null;

  /** Called when an answer says the session is gone (401), so the app can ask to sign in again. */
  onUnauthorized(listener: (() => void) | null): void {
    this.unauthorizedListener = listener;
  }

  async signIn(token: string): Promise<SessionInfo> {
    const session = await this.request<SessionInfo>('POST', '/admin/session', { json: { token } }, false);
    this.csrfToken = session.csrf_token;
    return session;
  }

  /** The current session, or null when there is none (no cookie, or it expired). */
  async currentSession(): Promise<SessionInfo | null> {
    try {
      const session = await this.request<SessionInfo>('GET', '/admin/session', {}, false);
      this.csrfToken = session.csrf_token;
      return session;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return null;
      throw error;
    }
  }

  signInMethods(): Promise<SignInMethods> {
    return this.request('GET', '/admin/session/methods', {}, false);
  }

  async signOut(): Promise<void> {
    try {
      await this.request<void>('DELETE', '/admin/session');
    } finally {
      this.csrfToken = null;
    }
  }

  listTasks(query: URLSearchParams): Promise<TaskPage> {
    return this.request('GET', '/admin/tasks', { query });
  }

  getTask(id: string): Promise<TaskDetail> {
    return this.request('GET', `/admin/tasks/${path(id)}`);
  }

  /** The handoff's chain (the path from its root, its children, the tree from the root down, bounded) and its bounds' refusals. */
  getChain(id: string): Promise<TaskChainView> {
    return this.request('GET', `/admin/tasks/${path(id)}/chain`);
  }

  search(query: URLSearchParams): Promise<SearchPage> {
    return this.request('GET', '/admin/search', { query });
  }

  /** The agents (disabled ones too), of one org when `org` names one. */
  listAgents(cursor?: string, org?: string): Promise<AgentPage> {
    const query = new URLSearchParams({ include_disabled: 'true', limit: '200' });
    if (cursor) query.set('cursor', cursor);
    if (org) query.set('org', org);
    return this.request('GET', '/admin/agents', { query });
  }

  getAgent(handle: string): Promise<AgentRecord> {
    return this.request('GET', `/admin/agents/${path(handle)}`);
  }

  registerAgent(agent: NewAgent | NewUpstreamAgent): Promise<RegisteredAgent> {
    return this.request('POST', '/admin/agents', { json: agent });
  }

  updateAgent(handle: string, fields: AgentCardFields): Promise<AgentRecord> {
    return this.request('PATCH', `/admin/agents/${path(handle)}`, { json: fields });
  }

  disableAgent(handle: string): Promise<AgentRecord> {
    return this.request('DELETE', `/admin/agents/${path(handle)}`);
  }

  agentCounts(handle: string): Promise<AgentCounts> {
    return this.request('GET', `/admin/agents/${path(handle)}/counts`);
  }

  async listKeys(handle: string): Promise<ApiKeyInfo[]> {
    const list = await this.request<{ items: ApiKeyInfo[] }>('GET', `/admin/agents/${path(handle)}/keys`);
    return list.items;
  }

  createKey(handle: string): Promise<CreatedKey> {
    return this.request('POST', `/admin/agents/${path(handle)}/keys`);
  }

  revokeKey(handle: string, prefix: string): Promise<ApiKeyInfo> {
    return this.request('DELETE', `/admin/agents/${path(handle)}/keys/${path(prefix)}`);
  }

  /** Rotates a key: a new key first, then the old one revoked, so the agent is never without one. */
  async rotateKey(handle: string, oldPrefix: string): Promise<CreatedKey> {
    const created = await this.createKey(handle);
    await this.revokeKey(handle, oldPrefix);
    return created;
  }

  getTrust(handle: string): Promise<TrustPolicy> {
    return this.request('GET', `/admin/agents/${path(handle)}/trust`);
  }

  putTrustYaml(handle: string, yaml: string): Promise<TrustPolicy> {
    return this.request('PUT', `/admin/agents/${path(handle)}/trust`, { yaml });
  }

  getUpstream(handle: string): Promise<UpstreamStatusView> {
    return this.request('GET', `/admin/agents/${path(handle)}/upstream`);
  }

  /** Reads the upstream agent's card now: profile changes apply at once, the others wait as a pending change. */
  refreshUpstream(handle: string): Promise<UpstreamRefreshReply> {
    return this.request('POST', `/admin/agents/${path(handle)}/upstream/refresh`);
  }

  decideUpstreamChange(handle: string, decision: UpstreamChangeDecision): Promise<UpstreamChangeDecisionReply> {
    return this.request('POST', `/admin/agents/${path(handle)}/upstream/pending-change/${decision}`);
  }

  /** The requests the relay made to upstream agents' servers for the task, oldest first. */
  async upstreamCalls(taskId: string): Promise<UpstreamCallView[]> {
    const reply = await this.request<{ calls: UpstreamCallView[] }>('GET', `/admin/tasks/${path(taskId)}/upstream-calls`);
    return reply.calls;
  }

  listDeliveries(status: DeliveryStatus, taskId?: string): Promise<{ deliveries: DeliveryView[] }> {
    const query = new URLSearchParams({ status, limit: '100' });
    if (taskId) query.set('task_id', taskId);
    return this.request('GET', '/admin/deliveries', { query });
  }

  deliveriesOfTask(taskId: string): Promise<{ deliveries: DeliveryView[] }> {
    return this.request('GET', '/admin/deliveries', { query: new URLSearchParams({ task_id: taskId, limit: '100' }) });
  }

  getDelivery(id: string): Promise<DeliveryDetail> {
    return this.request('GET', `/admin/deliveries/${path(id)}`);
  }

  redeliver(id: string): Promise<DeliveryView> {
    return this.request('POST', `/admin/deliveries/${path(id)}/redeliver`);
  }

  redeliverAll(status: 'failed' | 'dead', taskId?: string): Promise<{ redelivered: number }> {
    return this.request('POST', '/admin/deliveries/redeliver', { json: taskId ? { status, task_id: taskId } : { status } });
  }

  /** The held handoffs waiting for a decision, newest first. */
  listApprovals(cursor?: string): Promise<TaskPage> {
    const query = new URLSearchParams({ limit: '100' });
    if (cursor) query.set('cursor', cursor);
    return this.request('GET', '/admin/approvals', { query });
  }

  getApproval(id: string): Promise<TaskDetail> {
    return this.request('GET', `/admin/approvals/${path(id)}`);
  }

  /** Approves (delivers) or denies (rejects, telling the sender the comment as the reason) a held handoff. */
  decideApproval(id: string, decision: ApprovalDecision, comment: string): Promise<TaskView> {
    return this.request('POST', `/admin/approvals/${path(id)}/${decision}`, { json: comment ? { comment } : {} });
  }

  /** The tool prompts people answer that wait for an answer, oldest first (as many as the relay gives at once). */
  listToolPrompts(): Promise<PendingToolPromptsReply> {
    return this.request('GET', '/admin/approvals/tool-prompts', { query: new URLSearchParams({ limit: String(TOOL_PROMPT_LIMITS.pendingPageMax) }) });
  }

  /** Allows or denies a tool prompt of a handoff whose tool prompts people answer; the reason is what the coding agent is told. */
  answerToolPrompt(taskId: string, requestId: string, decision: PermissionDecision, reason: string): Promise<TaskView> {
    return this.request('POST', `/admin/approvals/${path(taskId)}/tool-prompts/${path(requestId)}/${decision}`, { json: reason ? { reason } : {} });
  }

  /** The orgs the person sees, by name. */
  listOrgs(cursor?: string): Promise<OrgPage> {
    const query = new URLSearchParams({ limit: '200' });
    if (cursor) query.set('cursor', cursor);
    return this.request('GET', '/admin/orgs', { query });
  }

  getOrg(name: string): Promise<OrgRecord> {
    return this.request('GET', `/admin/orgs/${path(name)}`);
  }

  createOrg(org: NewOrg): Promise<OrgRecord> {
    return this.request('POST', '/admin/orgs', { json: org });
  }

  updateOrg(name: string, fields: OrgChanges): Promise<OrgRecord> {
    return this.request('PATCH', `/admin/orgs/${path(name)}`, { json: fields });
  }

  /** The people given a role in the org through the admin API (claims may give others). */
  orgPeople(name: string, cursor?: string): Promise<OrgPeoplePage> {
    const query = new URLSearchParams({ limit: '500' });
    if (cursor) query.set('cursor', cursor);
    return this.request('GET', `/admin/orgs/${path(name)}/people`, { query });
  }

  overview(): Promise<Overview> {
    return this.request('GET', '/admin/overview');
  }

  private async request<T>(method: Method, url: string, options: RequestOptions = {}, reportUnauthorized = true): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.yaml !== undefined) {
      headers['content-type'] = 'application/yaml';
      body = options.yaml;
    }
    if (method !== 'GET' && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    const query = options.query?.toString();
    const response = await fetch(query ? `${url}?${query}` : url, { method, headers, body, credentials: 'same-origin', cache: 'no-store' });
    if (!response.ok) {
      const error = await ApiError.from(response);
      if (response.status === 401 && reportUnauthorized) {
        this.csrfToken = null;
        this.unauthorizedListener?.();
      }
      throw error;
    }
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }
}

export const adminApi = new AdminApi();
