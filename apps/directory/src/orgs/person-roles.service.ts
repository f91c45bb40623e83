import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan, type FindOptionsWhere } from 'typeorm';
import {
  normalizeGrants,
  parseRoleGrant,
  PERSON_ROLE_LIMITS,
  RelayError,
  type ListOrgPeopleRequest,
  type OrgPeoplePage,
  type PersonRequest,
  type PersonRoles,
  type PutPersonRolesRequest,
  type RoleGrant,
} from '@app/contracts';
import { OrgEntity } from './org.entity';
import { PersonRoleEntity } from './person-role.entity';

const RELAY_WIDE = '*';

/** The roles admins give people through the admin API; the edge adds them to what a person's claims give at sign-in. */
@Injectable()
export class PersonRolesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async get(person: PersonRequest): Promise<PersonRoles> {
    const rows = await this.dataSource.getRepository(PersonRoleEntity).find({ where: { issuer: person.issuer, subject: person.subject } });
    return this.toRoles(person, rows);
  }

  /** Replaces the person's roles (one per org, its strongest; an empty list removes them). */
  async put(request: PutPersonRolesRequest): Promise<PersonRoles> {
    const grants = normalizeGrants(request.roles.map((entry) => parseRoleGrant(entry)).filter((grant): grant is RoleGrant => grant !== undefined));
    const rows = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(PersonRoleEntity);
      await repository.delete({ issuer: request.issuer, subject: request.subject });
      if (grants.length === 0) return [];
      await repository.insert(
        grants.map((grant) => ({ issuer: request.issuer, subject: request.subject, org: grant.org ?? RELAY_WIDE, role: grant.role, updatedAt: new Date() })),
      );
      return repository.find({ where: { issuer: request.issuer, subject: request.subject } });
    });
    return this.toRoles(request, rows);
  }

  /** The people given a role in the org, by subject, in keyset pages; 404 `org_not_found` when there is no such org. */
  async listOfOrg(request: ListOrgPeopleRequest): Promise<OrgPeoplePage> {
    if (!(await this.dataSource.getRepository(OrgEntity).exists({ where: { name: request.org } }))) {
      throw new RelayError('org_not_found', `No org named ${request.org}`, { org: request.org });
    }
    const limit = request.limit ?? PERSON_ROLE_LIMITS.orgPeopleDefaultLimit;
    const where: FindOptionsWhere<PersonRoleEntity> = { issuer: request.issuer, org: request.org };
    if (request.cursor) where.subject = MoreThan(Buffer.from(request.cursor, 'base64url').toString('utf8'));
    const rows = await this.dataSource.getRepository(PersonRoleEntity).find({ where, order: { subject: 'ASC' }, take: limit + 1 });
    const items = rows.slice(0, limit);
    return {
      org: request.org,
      issuer: request.issuer,
      items: items.map((row) => ({ subject: row.subject, role: row.role, updated_at: row.updatedAt.toISOString() })),
      next_cursor: rows.length > limit ? Buffer.from(items[items.length - 1].subject, 'utf8').toString('base64url') : null,
    };
  }

  private toRoles(person: PersonRequest, rows: PersonRoleEntity[]): PersonRoles {
    return {
      issuer: person.issuer,
      subject: person.subject,
      grants: normalizeGrants(rows.map((row) => ({ org: row.org === RELAY_WIDE ? null : row.org, role: row.role }))),
      updated_at: rows.length === 0 ? null : new Date(Math.max(...rows.map((row) => row.updatedAt.getTime()))).toISOString(),
    };
  }
}
