import { Body, Controller, Get, Inject, Param, Put, UseFilters, UseGuards, UseInterceptors, UsePipes } from '@nestjs/common';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { AGENT_LIMITS, PERSON_ROLE_SUBJECTS, PersonRolesFields, RelayError, type PersonRoles } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { LeastRole } from '../admin-roles';
import { AdminTokenGuard } from '../sign-in/admin-token.guard';
import { AdminAuditInterceptor, Audited } from '../audit/admin-audit';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { EdgeConfig } from '../../edge.config';

export class PersonSubParam {
  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenSubjectChars)
  sub: string;
}

/**
 * Roles admins give people of the console's OpenID Provider, per org or relay-wide, beside those
 * their claims give (docs/orgs.md#scoped-roles); a change counts from the person's next sign-in.
 */
@Controller('admin/people')
@UseGuards(AdminTokenGuard)
@LeastRole('admin')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
@UseInterceptors(AdminAuditInterceptor)
export class AdminPeopleController {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  /** The console's provider: the people these roles are for sign in there. */
  private issuer(): string {
    const issuer = this.config.RELAY_CONSOLE_OIDC_ISSUER;
    if (issuer === undefined) {
      throw new RelayError('invalid_params', 'People sign in through OIDC, and none is configured (RELAY_CONSOLE_OIDC_ISSUER)', { field: 'sub' });
    }
    return issuer;
  }

  /** `GET /admin/people/{sub}/roles`: the roles given to the person (their claims may give more). */
  @Get(':sub/roles')
  get(@Param() { sub }: PersonSubParam): Promise<PersonRoles> {
    return this.rpc.request(PERSON_ROLE_SUBJECTS.get, { issuer: this.issuer(), subject: sub });
  }

  /** `PUT /admin/people/{sub}/roles {roles: ["payments:approver", "viewer"]}`: replaces them; `[]` removes them. */
  @Put(':sub/roles')
  @LeastRole('admin')
  @Audited('person_roles.put', 'sub', (result) => ({ grants: (result as PersonRoles).grants }))
  put(@Param() { sub }: PersonSubParam, @Body() body: PersonRolesFields): Promise<PersonRoles> {
    return this.rpc.request(PERSON_ROLE_SUBJECTS.put, { issuer: this.issuer(), subject: sub, roles: body.roles });
  }
}
