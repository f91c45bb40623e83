import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ORG_LIMITS, RelayError, type OrgApprovalsView } from '@app/contracts';
import { SecretCipher, SecretDecryptionError, type SealedColumn } from '@app/secrets';
import { NotifierConfig } from '../notifier.config';
import { SsrfRefusedError } from '../outbound/ssrf-guard';
import { checkApprovalsSlackUrl } from './approvals-slack-url';

const TABLE = '"notifier"."org_approval_channels"';

/** An org's approvals Slack channel as planning reads it: its URL, or null when it is set but cannot be opened. */
export interface OrgSlackChannel {
  url: string | null;
}
const FIELD = 'notifications.approvals_slack_url';

/** Stored sealed (AES-256-GCM under RELAY_SECRET_KEYS). */
export const ORG_APPROVAL_CHANNEL_SEALED_COLUMNS: SealedColumn[] = [{ table: TABLE, keyColumns: ['org'], column: 'slack_url', kind: 'text' }];

/**
 * Each org's approvals Slack channel (docs/orgs.md#approvals-notifications). The URL arrives sealed
 * to the notifier's key, is checked by the outbound rules, stored sealed, never returned (its host
 * is shown instead) and never logged. A held handoff's planning reads its org's row: one primary-key
 * read of the notifier's own table, only for the events that tell the approvers, and always what the
 * last change stored, whichever replica made it.
 */
@Injectable()
export class OrgApprovalChannelsService {
  private readonly logger = new Logger(OrgApprovalChannelsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
  ) {}

  /** The URL's host once it passes the outbound rules; `invalid_params` naming the field otherwise. */
  check(url: string): string {
    if (url.length > ORG_LIMITS.approvalsSlackUrlChars) {
      throw new RelayError('invalid_params', `${FIELD}: must be at most ${ORG_LIMITS.approvalsSlackUrlChars} characters`, { field: FIELD });
    }
    try {
      return checkApprovalsSlackUrl(url, this.config.RELAY_WEBHOOK_ALLOW_PRIVATE).host;
    } catch (error) {
      if (error instanceof SsrfRefusedError) throw new RelayError('invalid_params', `${FIELD}: ${error.message}`, { field: FIELD });
      throw error;
    }
  }

  /** Sets (a checked URL) or clears (null) the org's channel. */
  async put(org: string, url: string | null): Promise<OrgApprovalsView> {
    if (url === null) {
      await this.dataSource.query(`DELETE FROM ${TABLE} WHERE "org" = $1`, [org]);
      this.logger.log({ org }, 'org approvals channel cleared');
      return { org, approvals_slack_url: { configured: false, host: null } };
    }
    const host = this.check(url);
    await this.dataSource.query(
      `INSERT INTO ${TABLE} ("org", "slack_url", "slack_host", "updated_at") VALUES ($1, $2, $3, now())
       ON CONFLICT ("org") DO UPDATE SET "slack_url" = EXCLUDED."slack_url", "slack_host" = EXCLUDED."slack_host", "updated_at" = now()`,
      [org, this.cipher.seal(url), host],
    );
    this.logger.log({ org, host }, 'org approvals channel set');
    return { org, approvals_slack_url: { configured: true, host } };
  }

  /** Whether each org has a channel, and its host. */
  async views(orgs: string[]): Promise<OrgApprovalsView[]> {
    const rows = (await this.dataSource.query(`SELECT "org", "slack_host" FROM ${TABLE} WHERE "org" = ANY($1::text[])`, [orgs])) as Array<{
      org: string;
      slack_host: string;
    }>;
    const hosts = new Map(rows.map((row) => [row.org, row.slack_host]));
    return orgs.map((org) => {
      const host = hosts.get(org);
      return { org, approvals_slack_url: host === undefined ? { configured: false, host: null } : { configured: true, host } };
    });
  }

  /**
   * The org's approvals Slack channel, its URL opened; null when it has none. One sealed with a key
   * RELAY_SECRET_KEYS no longer lists is still the org's channel (`url: null`): its notices go
   * nowhere, never to the relay's channel, until the key is listed again or the URL set anew.
   */
  async slackChannelOf(org: string): Promise<OrgSlackChannel | null> {
    const rows = (await this.dataSource.query(`SELECT "slack_url" FROM ${TABLE} WHERE "org" = $1`, [org])) as Array<{ slack_url: string }>;
    if (rows.length === 0) return null;
    try {
      return { url: this.cipher.open(rows[0].slack_url) };
    } catch (error) {
      if (!(error instanceof SecretDecryptionError)) throw error;
      this.logger.error({ org, reason: error.message }, 'org approvals channel cannot be opened: its notices are not posted');
      return { url: null };
    }
  }
}
