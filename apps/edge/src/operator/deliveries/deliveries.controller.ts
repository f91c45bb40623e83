import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseFilters, UseGuards, UseInterceptors, UsePipes } from '@nestjs/common';
import {
  ADMIN_DELIVERIES_SUBJECTS,
  RedeliverManyRequest,
  type RedeliverManyReply,
  ListDeliveriesRequest,
  NOTIFIER_SUBJECTS,
  RelayError,
  type DeliveryDetail,
  type DeliveryView,
  type ListDeliveriesReply,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { LeastRole } from '../admin-roles';
import type { FastifyRequest } from 'fastify';
import { adminPrincipalOf, AdminTokenGuard } from '../sign-in/admin-token.guard';
import { AdminAuditInterceptor, Audited } from '../audit/admin-audit';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The notifier's delivery log on the admin API: list by status, redeliver (dead letters included). */
@Controller('admin/deliveries')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
@UseInterceptors(AdminAuditInterceptor)
export class DeliveriesController {
  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  /** `GET /admin/deliveries?status=failed|dead|pending|succeeded&task_id=…&limit=…`, newest first. */
  @Get()
  list(@Query() query: ListDeliveriesRequest, @Req() request: FastifyRequest): Promise<ListDeliveriesReply> {
    const { orgs } = adminPrincipalOf(request);
    return this.rpc.request(NOTIFIER_SUBJECTS.listDeliveries, { ...query, orgs: orgs === 'all' ? undefined : orgs });
  }

  /** `POST /admin/deliveries/redeliver {status, task_id?}`: redelivers up to 1000 failed or dead deliveries, the oldest first. */
  @Post('redeliver')
  @LeastRole('operator')
  @HttpCode(202)
  @Audited('delivery.redeliver_many', undefined, (result, body) => ({ ...(body as RedeliverManyRequest), ...(result as RedeliverManyReply) }))
  redeliverMany(@Body() body: RedeliverManyRequest, @Req() request: FastifyRequest): Promise<RedeliverManyReply> {
    const { orgs } = adminPrincipalOf(request);
    return this.rpc.request(ADMIN_DELIVERIES_SUBJECTS.redeliverMany, { ...body, orgs: orgs === 'all' ? undefined : orgs });
  }

  /** `GET /admin/deliveries/{id}`: the delivery with every attempt (status code, error, duration). */
  @Get(':id')
  get(@Param('id') id: string): Promise<DeliveryDetail> {
    if (!UUID.test(id)) throw new RelayError('delivery_not_found', undefined, { id });
    return this.rpc.request(NOTIFIER_SUBJECTS.getDelivery, { id });
  }

  /** `POST /admin/deliveries/{id}/redeliver`: attempts the delivery again with a fresh retry schedule. */
  @Post(':id/redeliver')
  @LeastRole('operator')
  @HttpCode(202)
  @Audited('delivery.redeliver', 'id')
  redeliver(@Param('id') id: string): Promise<DeliveryView> {
    if (!UUID.test(id)) throw new RelayError('delivery_not_found', undefined, { id });
    return this.rpc.request(NOTIFIER_SUBJECTS.redeliver, { id });
  }
}
