import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import {
  DIRECTORY_SUBJECTS,
  HandleRequest,
  NOTIFIER_SUBJECTS,
  RelayError,
  RevokeKeyRequest,
  TokenSubjectFields,
  UpdateAgentFields,
  type AgentPage,
  type AgentRecord,
  type ApiKeyInfo,
  type ApiKeyList,
  type CreateAgentCommand,
  type CreateAgentReply,
  type CreateKeyReply,
  type AgentOwner,
  type AgentOwnerFields,
  type TokenSubject,
  type TrustPolicy,
  UpstreamTlsFields,
  type UpstreamChangeDecisionReply,
  type UpstreamRefreshReply,
  type UpstreamStatusView,
} from '@app/contracts';
import type { FastifyRequest } from 'fastify';
import { NatsRpcClient } from '@app/messaging';
import { generateWebhookSecret, NotifierSealer } from '@app/secrets';
import { LeastRole } from '../admin-roles';
import { adminPrincipalOf, AdminTokenGuard, type AdminPrincipal } from '../sign-in/admin-token.guard';
import { EdgeConfig } from '../../edge.config';
import { KeyFilter } from '../../auth/key-filter';
import { TokenVerifier } from '../../auth/token-verifier';
import { DirectoryLookups } from '../../directory/directory-lookups';
import { AdminAudit, AdminAuditInterceptor, Audited } from '../audit/admin-audit';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { listScopeOf } from '../org-scope/org-filter';
import { AdminAgentsQuery, RegisterAgentBody, TrustPolicyBody } from './admin-agents.dto';

/**
 * What registration shows: the agent, its first API key and its webhook signing secret, each once.
 * The directory commits the agent only with the secret already stored by the notifier; when the
 * notifier does not answer, registration fails with 503 and nothing is created.
 */
export type RegisteredAgent = CreateAgentReply;

/** The audit row of a card change decided: each field with its old and new value (a card holds no secret). */
function decisionDetail(result: unknown): Record<string, unknown> {
  return { changes: (result as UpstreamChangeDecisionReply).decided.changes.map(({ field, old, new: value }) => ({ field, old, new: value })) };
}

/** Whether `email` is the signed-in person's own, verified by the provider, and that person is the agent's `owner`. */
function verifiedOwnerEmail(email: string | null | undefined, owner: AgentOwner | null, principal: AdminPrincipal): boolean {
  const { person } = principal;
  if (!email || !owner || !person?.email_verified || person.email?.toLowerCase() !== email.toLowerCase()) return false;
  return owner.issuer.replace(/\/+$/, '') === person.issuer.replace(/\/+$/, '') && owner.subject === person.sub;
}

/** Route params arrive decoded (`bob%40acme` is `bob@acme`); handles are case-insensitive. */
/** The admin API over the directory (agents, keys, trust). Thin: validation here, rules in the directory. */
@Controller('admin/agents')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
@UseInterceptors(AdminAuditInterceptor)
export class AdminAgentsController {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(DirectoryLookups) private readonly lookups: DirectoryLookups,
    @Inject(KeyFilter) private readonly keyFilter: KeyFilter,
    @Inject(TokenVerifier) private readonly tokens: TokenVerifier,
    @Inject(AdminAudit) private readonly audit: AdminAudit,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(NotifierSealer) private readonly sealer: NotifierSealer,
  ) {}

  /** An owner as given (its issuer the console's when none is named); null clears; undefined leaves it. */
  private ownerOf(fields: AgentOwnerFields | null | undefined): AgentOwner | null | undefined {
    if (fields === undefined || fields === null) return fields;
    const issuer = fields.issuer ?? this.config.RELAY_CONSOLE_OIDC_ISSUER;
    if (issuer === undefined) {
      throw new RelayError(
        'invalid_params',
        'owner.issuer: name the OpenID Provider of the owner’s account (no console sign-in is configured, RELAY_CONSOLE_OIDC_ISSUER)',
        {
          field: 'owner.issuer',
        },
      );
    }
    return { issuer, subject: fields.subject };
  }

  @Post()
  @HttpCode(201)
  @LeastRole('admin')
  @Audited('agent.create', undefined, (result) => ({ handle: (result as RegisteredAgent).agent.handle }))
  async create(@Body() body: RegisterAgentBody, @Req() request: FastifyRequest): Promise<RegisteredAgent> {
    const { upstream: registration, owner: ownerFields, ...rest } = body;
    const principal = adminPrincipalOf(request);
    // Registered through a person's sign-in, the agent is theirs unless the body names its owner.
    const owner =
      this.ownerOf(ownerFields) ?? (ownerFields === undefined && principal.person ? { issuer: principal.person.issuer, subject: principal.person.sub } : null);
    const fields: CreateAgentCommand = { ...rest, owner, email_verified: verifiedOwnerEmail(rest.email, owner, principal) };
    let command: CreateAgentCommand = fields;
    if (registration) {
      // The card is read (and the credential checked and sealed) before the agent exists, but kept
      // apart: the directory makes it the agent's only once it holds the handle. A card that cannot
      // be read or offers no interface the relay speaks is a 400 and nothing is created.
      const { card_url, auth, tls } = registration;
      // The credential and client key travel sealed to the notifier's key: no other NATS user reads them.
      const sealed = auth || tls ? { sealed_credentials: await this.sealer.sealJson({ auth, tls }) } : {};
      const resolved = await this.rpc.request(NOTIFIER_SUBJECTS.resolveUpstream, { handle: fields.handle, card_url, ...sealed });
      const { upstream, card } = resolved;
      command = {
        ...fields,
        description: fields.description ?? card.description,
        skills: fields.skills ?? card.skills,
        upstream,
        upstream_registration: resolved.registration,
      };
    }
    let registered: RegisteredAgent;
    try {
      registered = await this.rpc.request(DIRECTORY_SUBJECTS.createAgent, command);
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'handle_taken') {
        // A refused registration changed nothing; the attempt is on record all the same.
        await this.audit.record(principal, 'agent.create_refused', fields.handle, {
          reason: 'handle_taken',
          upstream: registration !== undefined,
        });
      }
      throw error;
    }
    this.keyFilter.remember(registered.api_key);
    return registered;
  }

  @Get()
  async list(@Query() { org, ...query }: AdminAgentsQuery, @Req() request: FastifyRequest): Promise<AgentPage> {
    const { orgs } = await listScopeOf(this.rpc, adminPrincipalOf(request), org);
    return this.rpc.request(DIRECTORY_SUBJECTS.listAgents, { ...query, orgs: orgs === 'all' ? undefined : orgs });
  }

  @Get(':handle')
  get(@Param() { handle }: HandleRequest): Promise<AgentRecord> {
    return this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle: handle });
  }

  @Patch(':handle')
  @LeastRole('admin')
  @Audited('agent.update', 'handle')
  async update(@Param() { handle }: HandleRequest, @Body() body: UpdateAgentFields, @Req() request: FastifyRequest): Promise<AgentRecord> {
    const owner = this.ownerOf(body.owner);
    let emailVerified: boolean | undefined;
    if (body.email) {
      const principal = adminPrincipalOf(request);
      const ownerAfter = owner !== undefined ? owner : principal.person ? (await this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle })).owner : null;
      emailVerified = verifiedOwnerEmail(body.email, ownerAfter, principal);
    }
    return this.changing(
      this.rpc.request(DIRECTORY_SUBJECTS.updateAgent, {
        ...body,
        ...(owner !== undefined ? { owner } : {}),
        ...(emailVerified !== undefined ? { email_verified: emailVerified } : {}),
        handle,
      }),
    );
  }

  /** Disables the agent: its keys stop working at once; its tasks stay readable to the other party. */
  @Delete(':handle')
  @LeastRole('operator')
  @Audited('agent.disable', 'handle')
  disable(@Param() { handle }: HandleRequest): Promise<AgentRecord> {
    return this.changing(this.rpc.request(DIRECTORY_SUBJECTS.disableAgent, { handle: handle }));
  }

  @Post(':handle/keys')
  @LeastRole('admin')
  @HttpCode(201)
  @Audited('key.create', 'handle', (result) => ({ prefix: (result as CreateKeyReply).key.prefix }))
  async createKey(@Param() { handle }: HandleRequest): Promise<CreateKeyReply> {
    const created = await this.rpc.request(DIRECTORY_SUBJECTS.createKey, { handle: handle });
    this.keyFilter.remember(created.api_key);
    return created;
  }

  @Get(':handle/keys')
  listKeys(@Param() { handle }: HandleRequest): Promise<ApiKeyList> {
    return this.rpc.request(DIRECTORY_SUBJECTS.listKeys, { handle: handle });
  }

  @Delete(':handle/keys/:prefix')
  @LeastRole('admin')
  @Audited('key.revoke', 'handle', (result) => ({ prefix: (result as ApiKeyInfo).prefix }))
  revokeKey(@Param() key: RevokeKeyRequest): Promise<ApiKeyInfo> {
    return this.changing(this.rpc.request(DIRECTORY_SUBJECTS.revokeKey, { handle: key.handle, prefix: key.prefix }));
  }

  @Get(':handle/trust')
  getTrust(@Param() { handle }: HandleRequest): Promise<TrustPolicy> {
    return this.rpc.request(DIRECTORY_SUBJECTS.getTrust, { handle: handle });
  }

  /** Replaces the trust policy, from JSON or from a `trust.yaml` body (`Content-Type: application/yaml`). */
  @Put(':handle/trust')
  @LeastRole('operator')
  @Audited('trust.put', 'handle')
  putTrust(@Param() { handle }: HandleRequest, @Body() body: TrustPolicyBody): Promise<TrustPolicy> {
    const target = handle;
    if (body.agent !== undefined && body.agent !== target) {
      throw new RelayError('invalid_params', `agent: the policy names ${body.agent}, not ${target}`, {
        field: 'agent',
        fields: [{ field: 'agent', messages: [`must be ${target} (the agent in the URL)`] }],
      });
    }
    return this.changing(
      this.rpc.request(DIRECTORY_SUBJECTS.putTrust, {
        handle: target,
        allow: body.allow ?? [],
        block: body.block ?? [],
        hold: body.hold ?? [],
        tool_prompts: body.tool_prompts ?? [],
        chain: body.chain ?? {},
      }),
    );
  }

  /**
   * Maps the `sub` of a configured issuer's tokens to the agent: such a token authenticates as this
   * agent, and one whose handle claim names another agent is refused.
   */
  @Put(':handle/token-subject')
  @LeastRole('admin')
  @Audited('token_subject.put', 'handle', (result) => ({ issuer: (result as TokenSubject).issuer, subject: (result as TokenSubject).subject }))
  putTokenSubject(@Param() { handle }: HandleRequest, @Body() body: TokenSubjectFields): Promise<TokenSubject> {
    if (!this.tokens.hasIssuer(body.issuer)) {
      throw new RelayError('invalid_params', `issuer: ${body.issuer} is not one of RELAY_OIDC_ISSUERS`, { field: 'issuer' });
    }
    return this.changing(this.rpc.request(DIRECTORY_SUBJECTS.putTokenSubject, { handle: handle, issuer: body.issuer, subject: body.subject }));
  }

  /** Removes the agent's token subject: its tokens then authenticate by their handle claim only. */
  @Delete(':handle/token-subject')
  @LeastRole('admin')
  @Audited('token_subject.delete', 'handle')
  deleteTokenSubject(@Param() { handle }: HandleRequest): Promise<TokenSubject> {
    return this.changing(this.rpc.request(DIRECTORY_SUBJECTS.putTokenSubject, { handle: handle, issuer: null, subject: null }));
  }

  /** Replaces the agent's webhook signing secret (kept by the notifier) and shows the new one once. */
  @Post(':handle/webhook-secret')
  @LeastRole('admin')
  @HttpCode(201)
  @Audited('webhook_secret.rotate', 'handle')
  async rotateSecret(@Param() { handle }: HandleRequest): Promise<{ handle: string; webhook_secret: string }> {
    const agent = await this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle: handle });
    if (agent.disabled) throw new RelayError('agent_disabled', `The agent ${agent.handle} is disabled`);
    // A rotation that reaches a stalled notifier after this request gave up is refused there, so
    // the secret in use is always one that was shown.
    const notAfter = new Date(Date.now() + this.rpc.defaultTimeoutMs).toISOString();
    const webhookSecret = generateWebhookSecret();
    await this.rpc.request(NOTIFIER_SUBJECTS.rotateWebhookSecret, {
      handle: agent.handle,
      not_after: notAfter,
      sealed_webhook_secret: await this.sealer.seal(webhookSecret),
    });
    return { handle: agent.handle, webhook_secret: webhookSecret };
  }

  /** `GET /admin/agents/{handle}/upstream`: the accepted card's interface, a pending card change, the mTLS identity and the upstream's health. */
  @Get(':handle/upstream')
  upstream(@Param() { handle }: HandleRequest): Promise<UpstreamStatusView> {
    return this.rpc.request(NOTIFIER_SUBJECTS.upstreamStatus, { handle });
  }

  /** Reads the agent's card now: profile changes take effect, changes of its interface or security wait for review. */
  @Post(':handle/upstream/refresh')
  @HttpCode(200)
  @LeastRole('operator')
  @Audited('upstream.card_refresh', 'handle', (result) => {
    const { refresh } = result as UpstreamRefreshReply;
    return { outcome: refresh.outcome, fields: refresh.changes.map((change) => change.field) };
  })
  refreshCard(@Param() { handle }: HandleRequest): Promise<UpstreamRefreshReply> {
    return this.rpc.request(NOTIFIER_SUBJECTS.refreshUpstreamCard, { handle });
  }

  /** Deliveries use the new card from here on. 409 `no_pending_change` when nothing waits. */
  @Post(':handle/upstream/pending-change/accept')
  @HttpCode(200)
  @LeastRole('operator')
  @Audited('upstream.card_change_accept', 'handle', decisionDetail)
  async acceptCardChange(@Param() { handle }: HandleRequest): Promise<UpstreamChangeDecisionReply> {
    const status = await this.rpc.request(NOTIFIER_SUBJECTS.upstreamStatus, { handle });
    const proposed = status.card.pending_upstream;
    if (!proposed) throw new RelayError('no_pending_change', `The card of ${status.handle} has no change waiting for review`);
    // The directory takes a new interface from an operator's acceptance only; the notifier then records the card as accepted.
    await this.changing(this.rpc.request(DIRECTORY_SUBJECTS.acceptUpstream, { handle: status.handle, upstream: proposed }));
    return this.rpc.request(NOTIFIER_SUBJECTS.acceptUpstreamChange, { handle: status.handle });
  }

  /** The accepted card stays; the same change is not proposed again. 409 `no_pending_change` when nothing waits. */
  @Post(':handle/upstream/pending-change/reject')
  @HttpCode(200)
  @LeastRole('operator')
  @Audited('upstream.card_change_reject', 'handle', decisionDetail)
  rejectCardChange(@Param() { handle }: HandleRequest): Promise<UpstreamChangeDecisionReply> {
    return this.rpc.request(NOTIFIER_SUBJECTS.rejectUpstreamChange, { handle });
  }

  /** Replaces the mTLS client certificate and key (the next request uses them; the key is never shown). */
  @Put(':handle/upstream/tls')
  @LeastRole('admin')
  @Audited('upstream.tls_put', 'handle', (result) => ({ client_cert_subject: (result as UpstreamStatusView).tls?.client_cert_subject }))
  async putTls(@Param() { handle }: HandleRequest, @Body() body: UpstreamTlsFields): Promise<UpstreamStatusView> {
    return this.rpc.request(NOTIFIER_SUBJECTS.putUpstreamTls, { handle, sealed_tls: await this.sealer.sealJson(body) });
  }

  @Delete(':handle/upstream/tls')
  @LeastRole('admin')
  @Audited('upstream.tls_delete', 'handle')
  deleteTls(@Param() { handle }: HandleRequest): Promise<UpstreamStatusView> {
    return this.rpc.request(NOTIFIER_SUBJECTS.deleteUpstreamTls, { handle });
  }

  /**
   * A directory change made through this edge: its cached identities and trust decisions go once
   * the directory answered (other edges drop theirs on the directory's change notice).
   */
  private async changing<T>(change: Promise<T>): Promise<T> {
    try {
      return await change;
    } finally {
      this.lookups.forget();
    }
  }
}
