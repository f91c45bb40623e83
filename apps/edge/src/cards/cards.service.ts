import { Inject, Injectable } from '@nestjs/common';
import { normalizeHandle, type AgentPublicProfile } from '@app/contracts';
import { DirectoryLookups } from '../directory/directory-lookups';
import { TokenVerifier } from '../auth/token-verifier';
import { EdgeConfig } from '../edge.config';
import { agentCardV1, relayAgentCard, relayCardV1, type AgentCardV1, type RelayAgentCard } from './agent-card';

/** A card with the update time of the agent it describes (ISO 8601). */
export interface DatedCard<T> {
  card: T;
  updatedAt?: string;
}

/** Agent cards built from the directory's public profiles; never a private field. */
@Injectable()
export class AgentCardService {
  constructor(
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(TokenVerifier) private readonly tokens: TokenVerifier,
  ) {}

  /** The public profile of an enabled agent; `agent_not_found` for an unknown or disabled handle. */
  async profile(handle: string): Promise<AgentPublicProfile> {
    const {
      id,
      handle: canonical,
      name,
      role,
      org,
      description,
      skills,
      metadata,
      input_modes,
    } = await this.directory.profile(normalizeHandle(handle) as string);
    return { id, handle: canonical, name, role, org, description, skills, metadata, input_modes };
  }

  async agentCardV1(handle: string): Promise<AgentCardV1> {
    return (await this.datedAgentCardV1(handle)).card;
  }

  /** The v1.0 card (with its org's tenant interfaces, if any) and when it last changed (the card's `Last-Modified`). */
  async datedAgentCardV1(handle: string): Promise<DatedCard<AgentCardV1>> {
    const [profile, tokenUrls] = await Promise.all([this.directory.profile(normalizeHandle(handle) as string), this.tokens.tokenEndpoints()]);
    const { updated_at: updatedAt, tenant, ...publicProfile } = profile;
    return { card: agentCardV1(publicProfile, this.config.RELAY_PUBLIC_URL, tokenUrls, tenant ?? null), updatedAt };
  }

  /** The compact card and when its agent last changed. */
  async datedRelayAgentCard(handle: string): Promise<DatedCard<RelayAgentCard>> {
    const profile = await this.directory.profile(normalizeHandle(handle) as string);
    return { card: relayAgentCard(profile, this.config.RELAY_PUBLIC_URL), updatedAt: profile.updated_at };
  }

  async relayAgentCard(handle: string): Promise<RelayAgentCard> {
    return relayAgentCard(await this.profile(handle), this.config.RELAY_PUBLIC_URL);
  }

  async relayCardV1(): Promise<AgentCardV1> {
    return relayCardV1(this.config.RELAY_PUBLIC_URL, await this.tokens.tokenEndpoints());
  }
}
