import { Inject, Injectable } from '@nestjs/common';
import { HEALTH_SUBJECTS, RelayError, type HealthReply, type RelayService } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { EdgeConfig } from '../edge.config';

export interface ServiceReadiness {
  status: 'up' | 'down';
  postgres?: 'up' | 'down';
  instance?: string;
  /** The deployment id of the service's database. */
  deployment?: string;
  error?: string;
}

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  nats: 'up' | 'down';
  services: Record<RelayService, ServiceReadiness>;
  /** `deployment` when the services that answered name different deployment ids: two relays answer under this prefix. */
  down: string[];
}

@Injectable()
export class ReadinessService {
  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  async check(): Promise<ReadinessReport> {
    const natsUp = this.nats.isConnected();
    const services = Object.keys(HEALTH_SUBJECTS) as RelayService[];
    const results = await Promise.all(services.map((service) => this.checkService(service, natsUp)));
    const report = Object.fromEntries(services.map((service, index) => [service, results[index]])) as Record<RelayService, ServiceReadiness>;
    const down = [
      ...(natsUp ? [] : ['nats']),
      ...services.filter((service) => report[service].status === 'down'),
      ...services.filter((service) => report[service].postgres === 'down').map((service) => `${service}.postgres`),
      ...(new Set(results.flatMap((result) => (result.deployment ? [result.deployment] : []))).size > 1 ? ['deployment'] : []),
    ];
    return { status: down.length === 0 ? 'ready' : 'not_ready', nats: natsUp ? 'up' : 'down', services: report, down };
  }

  /**
   * Run as the edge starts: services answering for different deployment ids (two relay databases
   * under this NATS_SUBJECT_PREFIX) stop the start. Services not answering yet are no reason to stop.
   */
  async assertOneDeployment(): Promise<void> {
    const report = await this.check();
    if (!report.down.includes('deployment')) return;
    const answers = Object.entries(report.services).flatMap(([service, readiness]) => (readiness.deployment ? [`${service} ${readiness.deployment}`] : []));
    throw new Error(
      `NATS_SUBJECT_PREFIX=${JSON.stringify(this.config.NATS_SUBJECT_PREFIX)} is answered by services of different AgentRelay deployments ` +
        `(${answers.join(', ')}): give each deployment its own NATS_SUBJECT_PREFIX or its own NATS credentials/account`,
    );
  }

  private async checkService(service: RelayService, natsUp: boolean): Promise<ServiceReadiness> {
    if (!natsUp) return { status: 'down', error: 'NATS is not connected' };
    try {
      const reply: HealthReply = await this.nats.request(HEALTH_SUBJECTS[service], {}, this.config.READINESS_TIMEOUT_MS);
      // A service that has refused every new request for a while is not ready, though it answers its health check.
      const seen = { postgres: reply.postgres, instance: reply.instance, deployment: reply.deployment };
      if (reply.status === 'overloaded') return { status: 'down', ...seen, error: 'overloaded' };
      return { status: 'up', ...seen };
    } catch (error) {
      return { status: 'down', error: error instanceof RelayError ? error.reason : 'unknown_error' };
    }
  }
}
