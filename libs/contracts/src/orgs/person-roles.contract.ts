import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import { AGENT_LIMITS } from '../limits';
import { parseRoleGrant, type RoleGrant } from './org-scope';
import { ORG_LIMITS } from './orgs.model';
import type { OrgPeoplePage } from './person-roles.model';

export type * from './person-roles.model';

/** Request subjects of the roles an admin gives people through the admin API (beside those their claims give). */
export const PERSON_ROLE_SUBJECTS = {
  get: 'relay.directory.v1.people.roles.get',
  put: 'relay.directory.v1.people.roles.put',
  /** `{issuer, org}` → the people given a role in that org, by subject. */
  listOfOrg: 'relay.directory.v1.people.roles.list_of_org',
} as const;

export const PERSON_ROLE_LIMITS = {
  /** The most grants one person holds through the admin API. */
  grantsPerPerson: 100,
  /** The people one page of an org's people lists. */
  orgPeopleDefaultLimit: 100,
  orgPeopleMaxLimit: 500,
} as const;

/** A person at the console's OpenID Provider. */
export class PersonRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenIssuerChars)
  issuer: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenSubjectChars)
  subject: string;
}

/** Each entry `role` (relay-wide) or `org:role`, as a claim names them. */
export function IsRoleGrants(): PropertyDecorator {
  return ValidateBy({
    name: 'isRoleGrants',
    validator: {
      validate: (value: unknown) => Array.isArray(value) && value.every((entry) => parseRoleGrant(entry) !== undefined),
      defaultMessage: () => 'roles: each entry must be a role (auditor, viewer, approver, operator, admin) or org:role, e.g. payments:approver',
    },
  });
}

/** The admin API's body of `PUT /admin/people/{sub}/roles`: the person's roles, replacing those given before (an empty list removes them). */
export class PersonRolesFields {
  @IsArray()
  @ArrayMaxSize(PERSON_ROLE_LIMITS.grantsPerPerson)
  @IsRoleGrants()
  roles: string[];
}

export class PutPersonRolesRequest extends PersonRequest {
  @IsArray()
  @ArrayMaxSize(PERSON_ROLE_LIMITS.grantsPerPerson)
  @IsRoleGrants()
  roles: string[];
}

export interface PersonRoles {
  issuer: string;
  subject: string;
  /** The roles given through the admin API (claims may give more at sign-in). */
  grants: RoleGrant[];
  updated_at: string | null;
}

/** The admin API's query of `GET /admin/orgs/{name}/people`: keyset pages by subject. */
export class OrgPeopleQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(PERSON_ROLE_LIMITS.orgPeopleMaxLimit)
  limit?: number;

  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}

export class ListOrgPeopleRequest extends OrgPeopleQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenIssuerChars)
  issuer: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(ORG_LIMITS.nameChars)
  org: string;
}

export interface PersonRolesRpc {
  [PERSON_ROLE_SUBJECTS.get]: { request: PersonRequest; reply: PersonRoles };
  [PERSON_ROLE_SUBJECTS.put]: { request: PutPersonRolesRequest; reply: PersonRoles };
  [PERSON_ROLE_SUBJECTS.listOfOrg]: { request: ListOrgPeopleRequest; reply: OrgPeoplePage };
}
