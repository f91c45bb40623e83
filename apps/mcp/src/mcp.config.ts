import { Transform } from 'class-transformer';
import { toBoolean } from '@app/config';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';

/** The environment of agentrelay-mcp: which relay, as which agent. */
export class McpConfig {
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'RELAY_URL must be an http(s) URL' })
  RELAY_URL: string = 'http://127.0.0.1:8080';

  /** The agent's own API key (ah_live_…); every call is made as that agent. */
  @IsString()
  @MinLength(1, { message: 'AGENTRELAY_API_KEY must be set to your agent API key (ah_live_…)' })
  AGENTRELAY_API_KEY: string = '';

  /** Recorded when this agent accepts a task; a fresh id per server process when unset. */
  @IsOptional()
  @IsString()
  AGENTRELAY_SESSION_ID?: string;

  /** How often the inbox is polled while a client is subscribed to it (ms). */
  @IsInt()
  @Min(200)
  @Max(600000)
  AGENTRELAY_INBOX_POLL_MS: number = 5000;

  /** Push inbox events into a Claude Code session as channel notifications (`claude/channel`). */
  @Transform(toBoolean)
  @IsIn([true, false], { message: 'AGENTRELAY_CHANNEL must be 1 or 0 (true or false)' })
  AGENTRELAY_CHANNEL: boolean = false;
}
