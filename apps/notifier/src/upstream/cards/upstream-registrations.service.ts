import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { RelayError, type UpstreamCardSnapshot } from '@app/contracts';
import type { SealedColumn } from '@app/secrets';
import { UpstreamCardsService } from './upstream-cards.service';
import { UpstreamCredentialsService, type SealedCredential } from '../identity/upstream-credentials.service';
import { UpstreamTlsService, type SealedTls } from '../identity/upstream-tls.service';

/** How long a registration waits for the directory to create its agent (the edge asks at once; a stalled one is registered again). */
export const UPSTREAM_REGISTRATION_TTL_MS = 60 * 60 * 1000;

/** A waiting registration's secrets are sealed like the agent's own (and re-sealed with them), then copied sealed. */
export const UPSTREAM_REGISTRATION_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"notifier"."upstream_registrations"', keyColumns: ['id'], column: 'secret', kind: 'text' },
  { table: '"notifier"."upstream_registrations"', keyColumns: ['id'], column: 'client_key', kind: 'text' },
];

/** A waiting registration as the table holds it: the secrets in columns of their own. */
interface StoredRegistration {
  credential: Omit<SealedCredential, 'secret'> | null;
  secret: string | null;
  tls: Omit<SealedTls, 'client_key'> | null;
  client_key: string | null;
  accepted: UpstreamCardSnapshot;
}

interface RegistrationRow {
  credential: SealedCredential | null;
  tls: SealedTls | null;
  accepted: UpstreamCardSnapshot;
}

/**
 * An upstream agent's registration in two steps, so that a registration refused by the directory
 * (its handle is taken) changes nothing of the agent that holds the handle: reading the card keeps
 * the checked credential, client identity and card under a registration id (`keep`), and the
 * directory, inside the transaction that holds the new agent's handle, makes them the agent's
 * (`commit`, with its webhook secret).
 */
@Injectable()
export class UpstreamRegistrationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
    @Inject(UpstreamTlsService) private readonly tls: UpstreamTlsService,
    @Inject(UpstreamCardsService) private readonly cards: UpstreamCardsService,
  ) {}

  /** Keeps a checked registration for `handle`; the id is what commits it. Registrations older than the TTL go. */
  async keep(handle: string, registration: RegistrationRow): Promise<string> {
    const id = randomUUID();
    await this.dataSource.query(`DELETE FROM "notifier"."upstream_registrations" WHERE "created_at" < now() - make_interval(secs => $1)`, [
      UPSTREAM_REGISTRATION_TTL_MS / 1000,
    ]);
    const { credential, tls, accepted } = registration;
    await this.dataSource.query(
      `INSERT INTO "notifier"."upstream_registrations" ("id", "handle", "credential", "secret", "tls", "client_key", "accepted")
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        id,
        handle,
        credential ? JSON.stringify({ scheme: credential.scheme, header_name: credential.header_name, oauth2: credential.oauth2 }) : null,
        credential?.secret ?? null,
        tls ? JSON.stringify({ client_cert: tls.client_cert, ca: tls.ca }) : null,
        tls?.client_key ?? null,
        JSON.stringify(accepted),
      ],
    );
    return id;
  }

  /** Makes a kept registration the agent's credential, client identity and accepted card, in one transaction; once. */
  async commit(id: string, handle: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const rows = (await manager.query(
        `DELETE FROM "notifier"."upstream_registrations" WHERE "id" = $1 AND "handle" = $2 AND "created_at" >= now() - make_interval(secs => $3)
         RETURNING "credential", "secret", "tls", "client_key", "accepted"`,
        [id, handle, UPSTREAM_REGISTRATION_TTL_MS / 1000],
      )) as [StoredRegistration[], number];
      const stored = rows[0][0];
      if (!stored) {
        throw new RelayError('invalid_params', `upstream: the registration of ${handle} is not waiting (expired, or already used); register again`, {
          field: 'upstream',
        });
      }
      const registration: RegistrationRow = {
        credential: stored.credential && stored.secret !== null ? { ...stored.credential, secret: stored.secret } : null,
        tls: stored.tls && stored.client_key !== null ? { ...stored.tls, client_key: stored.client_key } : null,
        accepted: stored.accepted,
      };
      await this.credentials.store(manager, handle, registration.credential);
      await this.tls.store(manager, handle, registration.tls);
      await this.cards.registered(manager, handle, registration.accepted);
    });
  }
}
