import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, MoreThan, QueryFailedError, Raw, type EntityManager, type FindOptionsWhere } from 'typeorm';
import {
  isValidHandle,
  normalizeHandle,
  orgOf,
  RelayError,
  type AgentIdentity,
  type AgentOwner,
  type AgentOwnerFields,
  type AgentPage,
  type AgentProfile,
  type AgentPublicProfile,
  type AgentRecord,
  type ApiKeyInfo,
  type ApiKeyList,
  type CreateAgentReply,
  type CreateAgentCommand,
  type CreateKeyReply,
  type AuthenticateTokenRequest,
  type ListAgentsRequest,
  type PutTokenSubjectRequest,
  type TokenSubject,
  type UpdateAgentRequest,
  type PutAgentUpstreamRequest,
  type AcceptAgentUpstreamRequest,
  type UpstreamInterface,
} from '@app/contracts';
import { AgentEventsPublisher } from '../events/agent-events.publisher';
import { AgentEntity } from './agent.entity';
import { ApiKeyEntity } from './api-key.entity';
import { generateApiKey, hashApiKey, isWellFormedApiKey, sameDigest } from './api-keys';
import { findKeyOwner, findTokenAgents } from './hot-lookups';
import { KeyFilterPublisher } from './key-filter-publisher';
import { WebhookSecretProvisioner } from './webhook-secret-provisioner';
import { OrgsService } from '../orgs/orgs.service';
import { OrgEntity } from '../orgs/org.entity';
import { TrustPolicyEntity } from '../trust/trust-policy.entity';
import { pgPoolOf } from '@app/database';

/** What of an upstream interface only an operator's acceptance changes: a card refresh may change `card_fetched_at` alone. */
const UPSTREAM_REVIEWED_FIELDS = [
  'card_url',
  'url',
  'binding',
  'protocol_version',
  'streaming',
  'push_notifications',
  'auth_scheme',
  'auth_header',
] as const satisfies ReadonlyArray<Exclude<keyof UpstreamInterface, 'card_fetched_at'>>;

const DEFAULT_PAGE_SIZE = 50;

function subjectTaken(request: PutTokenSubjectRequest): RelayError {
  return new RelayError('invalid_params', `subject: ${request.subject} of ${request.issuer} is already mapped to another agent`, { field: 'subject' });
}

/** A verified token that names no usable agent: `data.error` is OAuth's `invalid_token`, `data.check` which check failed. */
function invalidToken(check: string, description: string): RelayError {
  return new RelayError('unauthenticated', `Invalid token: ${description}`, { error: 'invalid_token', check, error_description: description });
}

/** An owner as the edge sends it, with its issuer filled in; an owner without one is bad input. */
function ownerOf(owner: AgentOwnerFields | null | undefined): AgentOwner | null {
  if (!owner) return null;
  if (!owner.issuer) throw new RelayError('invalid_params', 'owner.issuer: must name the OpenID Provider of the owner’s account', { field: 'owner.issuer' });
  return { issuer: owner.issuer, subject: owner.subject };
}

export function toAgentRecord(agent: AgentEntity): AgentRecord {
  return {
    id: agent.id,
    handle: agent.handle,
    name: agent.name,
    role: agent.role,
    description: agent.description,
    skills: agent.skills,
    metadata: agent.metadata,
    input_modes: agent.inputModes,
    owner: agent.ownerIssuer !== null && agent.ownerSubject !== null ? { issuer: agent.ownerIssuer, subject: agent.ownerSubject } : null,
    email: agent.email,
    email_verified: agent.emailVerified,
    notification_webhook_url: agent.notificationWebhookUrl,
    slack_webhook_url: agent.slackWebhookUrl,
    webhook_timeout_ms: agent.webhookTimeoutMs,
    upstream: agent.upstream ?? null,
    disabled: agent.disabledAt !== null,
    disabled_at: agent.disabledAt?.toISOString() ?? null,
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.updatedAt.toISOString(),
  };
}

export function toIdentity(agent: AgentEntity): AgentIdentity {
  return { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role, org: orgOf(agent.handle) };
}

export function toPublicProfile(agent: AgentEntity): AgentPublicProfile {
  return { ...toIdentity(agent), description: agent.description, skills: agent.skills, metadata: agent.metadata, input_modes: agent.inputModes };
}

function toKeyInfo(key: ApiKeyEntity): ApiKeyInfo {
  return { prefix: key.prefix, created_at: key.createdAt.toISOString(), revoked_at: key.revokedAt?.toISOString() ?? null };
}

function uniqueSkills(skills: string[] | undefined): string[] {
  return [...new Set((skills ?? []).map((skill) => skill.trim()).filter((skill) => skill.length > 0))];
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && driverError.constraint === constraint;
}

function handleTaken(handle: string): RelayError {
  return new RelayError('handle_taken', `The handle ${handle} is already registered`, { field: 'handle' });
}

function encodeCursor(handle: string): string {
  return Buffer.from(handle, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const handle = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isValidHandle(handle)) throw new RelayError('invalid_params', 'cursor: not a cursor from a previous page', { field: 'cursor' });
  return handle;
}

/** Agents and their API keys. */
@Injectable()
export class AgentsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(AgentEventsPublisher) private readonly events: AgentEventsPublisher,
    @Inject(WebhookSecretProvisioner) private readonly webhookSecrets: WebhookSecretProvisioner,
    @Inject(KeyFilterPublisher) private readonly keyFilter: KeyFilterPublisher,
    @Inject(OrgsService) private readonly orgs: OrgsService,
  ) {}

  async authenticate(apiKey: string): Promise<AgentIdentity> {
    if (!isWellFormedApiKey(apiKey)) throw new RelayError('unauthenticated');
    const hash = hashApiKey(apiKey);
    const owner = await findKeyOwner(pgPoolOf(this.dataSource), hash);
    if (!owner || !sameDigest(owner.keyHash, hash) || owner.revoked || owner.disabled) throw new RelayError('unauthenticated');
    return { id: owner.id, handle: owner.handle, name: owner.name, role: owner.role, org: owner.org };
  }

  /**
   * The agent a verified IdP token names. A mapped (issuer, subject) decides; a handle claim that
   * names another agent than the mapped one is refused, and so is a handle claim for an agent
   * mapped to another subject of the same issuer.
   */
  async authenticateToken(request: AuthenticateTokenRequest): Promise<AgentIdentity> {
    const handle = request.handle === undefined ? null : (normalizeHandle(request.handle) as string);
    const candidates = await findTokenAgents(pgPoolOf(this.dataSource), request.issuer, request.subject, handle);
    const mapped = candidates.find((agent) => agent.tokenIssuer === request.issuer && agent.tokenSubject === request.subject);
    let agent = mapped;
    if (mapped && handle !== null && mapped.handle !== handle) {
      throw invalidToken('subject_mismatch', `the handle claim names ${handle} but the token's subject is mapped to ${mapped.handle}`);
    }
    if (!agent && handle !== null) {
      agent = candidates.find((candidate) => candidate.handle === handle);
      if (!agent) throw invalidToken('unknown_agent', `the handle claim names ${handle}, which is not a registered agent`);
      if (agent.tokenIssuer === request.issuer && agent.tokenSubject !== request.subject) {
        throw invalidToken('subject_mismatch', `the agent ${handle} is mapped to another subject of this issuer`);
      }
    }
    if (!agent) throw invalidToken('unknown_agent', `the token has no handle claim and its subject is not mapped to an agent`);
    if (agent.disabled) throw invalidToken('agent_disabled', `the agent ${agent.handle} is disabled`);
    return { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role, org: agent.org };
  }

  /** Maps an IdP (issuer, subject) to the agent, or removes its mapping (both null). */
  async putTokenSubject(request: PutTokenSubjectRequest): Promise<TokenSubject> {
    let saved: AgentEntity;
    try {
      saved = await this.dataSource.transaction(async (manager) => {
        const agent = await this.findAgent(manager, request.handle, true);
        const unmapped = request.issuer === null || request.subject === null;
        if (!unmapped) {
          const holder = await manager.getRepository(AgentEntity).findOne({ where: { tokenIssuer: request.issuer!, tokenSubject: request.subject! } });
          if (holder && holder.id !== agent.id) throw subjectTaken(request);
        }
        agent.tokenIssuer = unmapped ? null : request.issuer;
        agent.tokenSubject = unmapped ? null : request.subject;
        return manager.getRepository(AgentEntity).save(agent);
      });
    } catch (error) {
      // Two mappings of one subject at once: the unique index decides.
      if (error instanceof QueryFailedError && (error.driverError as { constraint?: string }).constraint === 'agents_token_subject')
        throw subjectTaken(request);
      throw error;
    }
    this.events.announceChange({ kind: 'token_subject_changed', handle: saved.handle });
    return { handle: saved.handle, issuer: saved.tokenIssuer, subject: saved.tokenSubject };
  }

  async create(request: CreateAgentCommand): Promise<CreateAgentReply> {
    // An upstream interface is taken only with the notifier's own registration of it (the card it read, the credential it checked).
    if (request.upstream !== undefined && request.upstream_registration === undefined) {
      throw new RelayError('invalid_params', `upstream: the registration of ${request.handle} names no upstream registration of the notifier`, {
        field: 'upstream_registration',
      });
    }
    const generated = generateApiKey();
    const owner = ownerOf(request.owner);
    let created: { agent: AgentEntity; key: ApiKeyEntity; webhookSecret: string };
    try {
      created = await this.dataSource.transaction(async (manager) => {
        if (await manager.getRepository(AgentEntity).exists({ where: { handle: request.handle } })) throw handleTaken(request.handle);
        const startingTrust = await this.orgs.admitNewAgent(manager, request.handle);
        const agent = await manager.getRepository(AgentEntity).save(
          manager.getRepository(AgentEntity).create({
            handle: request.handle,
            name: request.name,
            role: request.role ?? null,
            description: request.description ?? null,
            skills: uniqueSkills(request.skills),
            metadata: request.metadata ?? {},
            inputModes: request.input_modes ?? null,
            email: request.email ?? null,
            emailVerified: request.email ? request.email_verified === true : false,
            ownerIssuer: owner?.issuer ?? null,
            ownerSubject: owner?.subject ?? null,
            notificationWebhookUrl: request.notification_webhook_url ?? null,
            slackWebhookUrl: request.slack_webhook_url ?? null,
            webhookTimeoutMs: request.webhook_timeout_ms ?? null,
            upstream: request.upstream ? { ...request.upstream } : null,
            disabledAt: null,
          }),
        );
        if (startingTrust) {
          const { allow, block, hold, tool_prompts: toolPrompts, chain } = startingTrust;
          await manager.getRepository(TrustPolicyEntity).insert({ agentId: agent.id, allow, block, hold, toolPrompts, chain });
        }
        const key = await manager
          .getRepository(ApiKeyEntity)
          .save(manager.getRepository(ApiKeyEntity).create({ agentId: agent.id, keyHash: generated.hash, prefix: generated.prefix, revokedAt: null }));
        await this.events.record(manager, agent);
        // Last, while the new row holds the handle: no agent without its secret, no secret (nor an
        // upstream's credential, client identity or card) stored for a handle someone else holds.
        // A failure here rolls the registration back (503).
        const webhookSecret = await this.webhookSecrets.provision(agent.handle, request.upstream_registration);
        return { agent, key, webhookSecret };
      });
    } catch (error) {
      if (isUniqueViolation(error, 'agents_handle_key')) throw handleTaken(request.handle);
      throw error;
    }
    await this.events.flush();
    // Before the key is shown, so that edges know it by the time its holder presents it.
    await this.keyFilter.add(generated.hash);
    return { agent: toAgentRecord(created.agent), api_key: generated.key, key: toKeyInfo(created.key), webhook_secret: created.webhookSecret };
  }

  async list(request: ListAgentsRequest): Promise<AgentPage> {
    const limit = request.limit ?? DEFAULT_PAGE_SIZE;
    const where: FindOptionsWhere<AgentEntity> = {};
    const after = request.cursor ? decodeCursor(request.cursor) : undefined;
    if (request.orgs !== undefined) {
      where.handle = Raw((column) => `split_part(${column}, '@', 2) = ANY(:orgs::text[])${after !== undefined ? ` AND ${column} > :after` : ''}`, {
        orgs: request.orgs,
        after,
      });
    } else if (after !== undefined) where.handle = MoreThan(after);
    if (!request.include_disabled) where.disabledAt = IsNull();
    const rows = await this.dataSource.getRepository(AgentEntity).find({ where, order: { handle: 'ASC' }, take: limit + 1 });
    const items = rows.slice(0, limit);
    return { items: items.map(toAgentRecord), next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1].handle) : null };
  }

  async get(handle: string): Promise<AgentRecord> {
    return toAgentRecord(await this.findAgent(this.dataSource.manager, handle));
  }

  /**
   * The public profile of an enabled agent, with its org's tenant; unknown and disabled agents are
   * both `agent_not_found`. It changed when the agent did or, if later, its org (whose tenant the card shows).
   */
  async profile(handle: string): Promise<AgentProfile> {
    const [agent, org] = await Promise.all([
      this.dataSource.getRepository(AgentEntity).findOne({ where: { handle, disabledAt: IsNull() } }),
      this.dataSource.getRepository(OrgEntity).findOne({ where: { name: orgOf(handle) }, select: { tenant: true, updatedAt: true } }),
    ]);
    if (!agent) throw new RelayError('agent_not_found', `No agent with the handle ${handle}`);
    const changed = org && org.updatedAt > agent.updatedAt ? org.updatedAt : agent.updatedAt;
    return { ...toPublicProfile(agent), updated_at: changed.toISOString(), tenant: org?.tenant ?? null };
  }

  async update(request: UpdateAgentRequest): Promise<AgentRecord> {
    const owner = request.owner === undefined ? undefined : ownerOf(request.owner);
    const agent = await this.dataSource.transaction(async (manager) => {
      const current = await this.findAgent(manager, request.handle, true);
      if (request.name !== undefined) current.name = request.name;
      if (request.role !== undefined) current.role = request.role;
      if (request.description !== undefined) current.description = request.description;
      if (request.skills !== undefined) current.skills = uniqueSkills(request.skills);
      if (request.metadata !== undefined) current.metadata = request.metadata;
      if (request.input_modes !== undefined) current.inputModes = request.input_modes;
      // A verified email is the owner's: another email, or another owner, makes it unverified unless the edge verified it again.
      const ownerChanged = owner !== undefined && ((owner?.issuer ?? null) !== current.ownerIssuer || (owner?.subject ?? null) !== current.ownerSubject);
      const emailChanged = request.email !== undefined && (request.email ?? '').toLowerCase() !== (current.email ?? '').toLowerCase();
      if (request.email !== undefined) current.email = request.email;
      if (owner !== undefined) {
        current.ownerIssuer = owner?.issuer ?? null;
        current.ownerSubject = owner?.subject ?? null;
      }
      if (emailChanged || ownerChanged) current.emailVerified = false;
      if (request.email_verified === true && current.email !== null) current.emailVerified = true;
      if (request.notification_webhook_url !== undefined) current.notificationWebhookUrl = request.notification_webhook_url;
      if (request.slack_webhook_url !== undefined) current.slackWebhookUrl = request.slack_webhook_url;
      if (request.webhook_timeout_ms !== undefined) current.webhookTimeoutMs = request.webhook_timeout_ms;
      current.updatedAt = new Date();
      const saved = await manager.getRepository(AgentEntity).save(current);
      await this.events.record(manager, saved);
      return saved;
    });
    this.events.announceChange({ kind: 'agent_updated', handle: agent.handle });
    await this.events.flush();
    return toAgentRecord(agent);
  }

  /**
   * The notifier's refresh of an upstream agent's card: the profile fields the card changed, and
   * when it was read. Where and how the relay delivers (URL, binding, version, capabilities, card
   * URL, credential scheme) changes only through an operator's acceptance (`acceptUpstream`).
   */
  async putUpstream(request: PutAgentUpstreamRequest): Promise<AgentRecord> {
    return this.writeUpstream(request.handle, (current) => {
      const changed = UPSTREAM_REVIEWED_FIELDS.filter((field) => !isDeepStrictEqual(current[field], request.upstream[field]));
      if (changed.length > 0) {
        throw new RelayError(
          'invalid_params',
          `upstream: a card refresh may not change ${changed.join(', ')}: such a change waits for an operator to accept it`,
          { field: 'upstream', changed },
        );
      }
      return {
        upstream: { ...current, card_fetched_at: request.upstream.card_fetched_at },
        ...(request.name !== undefined ? { name: request.name } : {}),
        ...(request.description !== undefined ? { description: request.description } : {}),
        ...(request.skills !== undefined ? { skills: request.skills } : {}),
      };
    });
  }

  /** An operator accepted a pending card change (admin API): deliveries use this interface from here on. */
  async acceptUpstream(request: AcceptAgentUpstreamRequest): Promise<AgentRecord> {
    return this.writeUpstream(request.handle, () => ({ upstream: { ...request.upstream } }));
  }

  private async writeUpstream(
    handle: string,
    change: (current: UpstreamInterface) => { upstream: UpstreamInterface; name?: string; description?: string | null; skills?: string[] },
  ): Promise<AgentRecord> {
    const agent = await this.dataSource.transaction(async (manager) => {
      const current = await this.findAgent(manager, handle, true);
      if (!current.upstream) {
        throw new RelayError('invalid_params', `handle: ${current.handle} is not an upstream agent`, { field: 'handle' });
      }
      const next = change(current.upstream);
      current.upstream = next.upstream;
      if (next.name !== undefined) current.name = next.name;
      if (next.description !== undefined) current.description = next.description;
      if (next.skills !== undefined) current.skills = uniqueSkills(next.skills);
      current.updatedAt = new Date();
      const saved = await manager.getRepository(AgentEntity).save(current);
      await this.events.record(manager, saved);
      return saved;
    });
    this.events.announceChange({ kind: 'agent_updated', handle: agent.handle });
    await this.events.flush();
    return toAgentRecord(agent);
  }

  /** Disables an agent: its keys are revoked at once; its tasks stay where they are. */
  async disable(handle: string): Promise<AgentRecord> {
    const { agent, changed, revokedHashes } = await this.dataSource.transaction(async (manager) => {
      const current = await this.findAgent(manager, handle, true);
      if (current.disabledAt !== null) return { agent: current, changed: false, revokedHashes: [] as string[] };
      const now = new Date();
      current.disabledAt = now;
      current.updatedAt = now;
      // The agent's row is locked: no key is issued to it meanwhile.
      const live = await manager.getRepository(ApiKeyEntity).find({ where: { agentId: current.id, revokedAt: IsNull() }, select: { id: true, keyHash: true } });
      await manager.getRepository(ApiKeyEntity).update({ agentId: current.id, revokedAt: IsNull() }, { revokedAt: now });
      const saved = await manager.getRepository(AgentEntity).save(current);
      await this.events.record(manager, saved);
      return { agent: saved, changed: true, revokedHashes: live.map((key) => key.keyHash) };
    });
    if (changed) {
      this.events.announceChange({ kind: 'agent_disabled', handle: agent.handle });
      await this.keyFilter.remove(revokedHashes);
      await this.events.flush();
    }
    return toAgentRecord(agent);
  }

  /** Adds a key; a display prefix that collides with another key of the agent (1 in 2^40) draws a new key. */
  async createKey(handle: string): Promise<CreateKeyReply> {
    for (let attempt = 1; ; attempt++) {
      const generated = generateApiKey();
      try {
        const key = await this.dataSource.transaction(async (manager) => {
          const agent = await this.findAgent(manager, handle, true);
          if (agent.disabledAt !== null) throw new RelayError('agent_disabled', `The agent ${handle} is disabled`);
          const repository = manager.getRepository(ApiKeyEntity);
          return repository.save(repository.create({ agentId: agent.id, keyHash: generated.hash, prefix: generated.prefix, revokedAt: null }));
        });
        await this.keyFilter.add(generated.hash);
        return { api_key: generated.key, key: toKeyInfo(key) };
      } catch (error) {
        if (attempt < 3 && isUniqueViolation(error, 'api_keys_agent_prefix_key')) continue;
        throw error;
      }
    }
  }

  async listKeys(handle: string): Promise<ApiKeyList> {
    const agent = await this.findAgent(this.dataSource.manager, handle);
    const keys = await this.dataSource.getRepository(ApiKeyEntity).find({ where: { agentId: agent.id }, order: { createdAt: 'ASC' } });
    return { items: keys.map(toKeyInfo) };
  }

  async revokeKey(handle: string, prefix: string): Promise<ApiKeyInfo> {
    const revoked = await this.dataSource.transaction(async (manager) => {
      const agent = await this.findAgent(manager, handle);
      const repository = manager.getRepository(ApiKeyEntity);
      const key = await repository.findOne({ where: { agentId: agent.id, prefix }, lock: { mode: 'pessimistic_write' } });
      if (!key || key.revokedAt !== null) throw new RelayError('key_not_found', `The agent ${handle} has no active key ${prefix}`);
      key.revokedAt = new Date();
      return { info: toKeyInfo(await repository.save(key)), keyHash: key.keyHash };
    });
    this.events.announceChange({ kind: 'key_revoked', handle });
    await this.keyFilter.remove([revoked.keyHash]);
    return revoked.info;
  }

  async findAgent(manager: EntityManager, handle: string, forUpdate = false): Promise<AgentEntity> {
    const agent = await manager
      .getRepository(AgentEntity)
      .findOne({ where: { handle }, ...(forUpdate ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
    if (!agent) throw new RelayError('agent_not_found', `No agent with the handle ${handle}`);
    return agent;
  }
}
