import { Controller, Inject, Optional, type Type } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { InjectDataSource } from '@nestjs/typeorm';
import { hostname } from 'node:os';
import type { DataSource } from 'typeorm';
import { HEALTH_SUBJECTS, type HealthReply, type RelayService } from '@app/contracts';
import { checkDatabase, DEPLOYMENT_ID } from '@app/database';
import { ServiceLoad } from './service-load';

export const INSTANCE_ID = Symbol('INSTANCE_ID');

export function defaultInstanceId(): string {
  return `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Answers the service's NATS health subject (`relay.<service>.v1.health`) with its own status, its
 * Postgres connection, its request load (`overloaded` once it has refused every new request for a
 * while) and the deployment id of its database.
 */
export function healthControllerFor(service: RelayService): Type<unknown> {
  @Controller()
  class ServiceHealthController {
    constructor(
      @InjectDataSource() private readonly dataSource: DataSource,
      @Inject(INSTANCE_ID) private readonly instanceId: string,
      @Inject(DEPLOYMENT_ID) private readonly deploymentId: string,
      @Optional() @Inject(ServiceLoad) private readonly load: ServiceLoad | null,
    ) {}

    @MessagePattern(HEALTH_SUBJECTS[service])
    async health(): Promise<HealthReply> {
      const postgres = await checkDatabase(this.dataSource);
      const overloaded = this.load?.overloaded ?? false;
      return {
        service,
        status: overloaded ? 'overloaded' : postgres === 'up' ? 'ok' : 'degraded',
        postgres,
        instance: this.instanceId,
        deployment: this.deploymentId,
        ...(this.load ? { load: this.load.report() } : {}),
      };
    }
  }
  Object.defineProperty(ServiceHealthController, 'name', { value: `${service[0].toUpperCase()}${service.slice(1)}HealthController` });
  return ServiceHealthController;
}
