/**
 * Offline checks of deploy/: renders the Kustomize base and overlays with `kubectl kustomize`
 * (kubectl must be installed; CI machines have it), checks the manifests' structure against what the
 * relay needs (probes, security contexts, resources, selectors, references, scrape annotations),
 * and checks that the Grafana dashboard and the alert rules parse and only use metrics that
 * libs/metrics defines. Prints every problem; exits 1 if there is one.
 *
 *   node --import ./test/support/process/register-ts.mjs scripts/ci/check-deploy.ts
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import {
  createMetricsRegistry,
  DeliveryMetrics,
  HttpMetrics,
  JetStreamConsumerMetrics,
  NatsClientMetrics,
  NatsHandlerMetrics,
  OrgQuotaMetrics,
  OutboxMetrics,
  PostgresPoolMetrics,
  RetentionMetrics,
} from '@app/metrics';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Manifest = Record<string, any>;

const KUSTOMIZATIONS = ['deploy/kubernetes/base', 'deploy/kubernetes/overlays/example'];
const DASHBOARD = 'deploy/grafana/agentrelay-dashboard.json';
const ALERTS = 'deploy/prometheus/agentrelay-alerts.yaml';
const COMPONENTS = ['edge', 'tasks', 'directory', 'notifier'];
const METRICS_PORT = 9464;
/** The services wait up to 10 s for in-flight NATS requests, then drain; the edge lets blocking sends (30 s) finish. */
const MIN_GRACE_SECONDS: Record<string, number> = { edge: 35, tasks: 15, directory: 15, notifier: 15 };
/** Kinds and the API versions the manifests must use (current, not deprecated ones). */
const API_VERSIONS: Record<string, string> = {
  ConfigMap: 'v1',
  Secret: 'v1',
  Service: 'v1',
  Namespace: 'v1',
  Deployment: 'apps/v1',
  Job: 'batch/v1',
  HorizontalPodAutoscaler: 'autoscaling/v2',
  PodDisruptionBudget: 'policy/v1',
  NetworkPolicy: 'networking.k8s.io/v1',
  Ingress: 'networking.k8s.io/v1',
};
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const problems: string[] = [];
function problem(where: string, message: string): void {
  problems.push(`${where}: ${message}`);
}

/** Every config key the relay reads, from .env.example. */
function knownConfigKeys(): Set<string> {
  const keys = new Set<string>();
  for (const line of readFileSync('.env.example', 'utf8').split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=/.exec(line);
    if (match) keys.add(match[1]);
  }
  return keys;
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

function checkContainer(where: string, container: Manifest, pod: Manifest, options: { probes: boolean }): void {
  if (!container.image) problem(where, 'container has no image');
  const resources = container.resources ?? {};
  for (const kind of ['requests', 'limits']) {
    for (const resource of ['cpu', 'memory']) if (!resources[kind]?.[resource]) problem(where, `container ${container.name} has no ${kind}.${resource}`);
  }
  const security = container.securityContext ?? {};
  if (security.allowPrivilegeEscalation !== false) problem(where, `container ${container.name} must set allowPrivilegeEscalation: false`);
  if (security.readOnlyRootFilesystem !== true) problem(where, `container ${container.name} must set readOnlyRootFilesystem: true`);
  if (!security.capabilities?.drop?.includes('ALL')) problem(where, `container ${container.name} must drop ALL capabilities`);
  const runAsNonRoot = security.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
  const runAsUser = security.runAsUser ?? pod.securityContext?.runAsUser;
  if (runAsNonRoot !== true) problem(where, 'pod must run with runAsNonRoot: true');
  if (!Number.isInteger(runAsUser) || runAsUser === 0) problem(where, 'pod must run as a numeric non-root runAsUser');
  const ports = new Map<string, number>((container.ports ?? []).map((port: Manifest) => [port.name, port.containerPort]));
  if (options.probes) {
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      const get = container[probe]?.httpGet;
      if (!get) {
        problem(where, `container ${container.name} has no HTTP ${probe}`);
        continue;
      }
      if (typeof get.port === 'string' && !ports.has(get.port)) problem(where, `${probe} uses port '${get.port}', which the container does not declare`);
    }
  }
}

/** The Secret of the processes' NATS seeds (files, not settings), one key per process. */
const NATS_CREDENTIALS_SECRET = 'agentrelay-nats-credentials';

/**
 * Least privilege on NATS: the process mounts its own seed and no other from the credentials
 * Secret, and NATS_NKEY_SEED_FILE names the file it mounted.
 */
function checkNatsCredential(where: string, component: string, pod: Manifest, seeds: Record<string, unknown> | undefined): void {
  const volume = (pod.volumes ?? []).find((candidate: Manifest) => candidate.secret?.secretName === NATS_CREDENTIALS_SECRET);
  if (!volume) {
    problem(where, `mounts no NATS credential from Secret ${NATS_CREDENTIALS_SECRET}`);
    return;
  }
  const items: Manifest[] = volume.secret.items ?? [];
  if (items.length !== 1 || items[0].key !== `${component}.nk`)
    problem(where, `must mount only its own NATS seed (${component}.nk) from ${NATS_CREDENTIALS_SECRET}`);
  if (seeds && !(`${component}.nk` in seeds)) problem(where, `Secret ${NATS_CREDENTIALS_SECRET} has no ${component}.nk`);
  for (const container of pod.containers ?? []) {
    const mount = (container.volumeMounts ?? []).find((candidate: Manifest) => candidate.name === volume.name);
    const seedFile = (container.env ?? []).find((env: Manifest) => env.name === 'NATS_NKEY_SEED_FILE')?.value;
    if (!mount || mount.readOnly !== true) problem(where, `container ${container.name} must mount its NATS credential read-only`);
    else if (seedFile !== `${mount.mountPath}/${items[0]?.path}`)
      problem(where, `container ${container.name}: NATS_NKEY_SEED_FILE must name the mounted seed (${mount.mountPath}/${items[0]?.path})`);
  }
}

function checkManifests(source: string, manifests: Manifest[]): void {
  const keys = new Set<string>();
  const configKeys = knownConfigKeys();
  const byKind = (kind: string): Manifest[] => manifests.filter((manifest) => manifest.kind === kind);
  for (const manifest of manifests) {
    const where = `${source} ${manifestKey(manifest)}`;
    if (keys.has(manifestKey(manifest))) problem(where, 'defined twice');
    keys.add(manifestKey(manifest));
    if (!API_VERSIONS[manifest.kind]) problem(where, `unexpected kind ${manifest.kind}`);
    else if (manifest.apiVersion !== API_VERSIONS[manifest.kind])
      problem(where, `apiVersion must be ${API_VERSIONS[manifest.kind]}, not ${manifest.apiVersion}`);
    if (typeof manifest.metadata?.name !== 'string' || !DNS_LABEL.test(manifest.metadata.name)) problem(where, 'metadata.name must be a DNS label');
    if ((manifest.kind === 'ConfigMap' || manifest.kind === 'Secret') && manifest.metadata?.name !== NATS_CREDENTIALS_SECRET) {
      const data = { ...(manifest.data ?? {}), ...(manifest.stringData ?? {}) };
      for (const [key, value] of Object.entries(data)) {
        if (!configKeys.has(key)) problem(where, `${key} is not a key the relay reads (.env.example)`);
        if (typeof value !== 'string') problem(where, `${key} must be a string (quote numbers and booleans)`);
      }
    }
  }
  const configMaps = new Set(byKind('ConfigMap').map((manifest) => manifest.metadata.name));
  const secrets = new Map(byKind('Secret').map((manifest) => [manifest.metadata.name, { ...(manifest.data ?? {}), ...(manifest.stringData ?? {}) }]));
  const deployments = byKind('Deployment');
  for (const component of COMPONENTS) {
    const deployment = deployments.find((manifest) => manifest.metadata.labels?.['app.kubernetes.io/component'] === component);
    const where = `${source} Deployment of ${component}`;
    if (!deployment) {
      problem(where, 'missing');
      continue;
    }
    const template = deployment.spec?.template ?? {};
    const pod = template.spec ?? {};
    if (!matches(deployment.spec?.selector?.matchLabels, template.metadata?.labels)) problem(where, 'selector does not match the pod template labels');
    const annotations = template.metadata?.annotations ?? {};
    if (
      annotations['prometheus.io/scrape'] !== 'true' ||
      annotations['prometheus.io/port'] !== String(METRICS_PORT) ||
      annotations['prometheus.io/path'] !== '/metrics'
    ) {
      problem(where, `pod template needs the Prometheus scrape annotations for port ${METRICS_PORT} and /metrics`);
    }
    if (!(pod.terminationGracePeriodSeconds >= MIN_GRACE_SECONDS[component]))
      problem(where, `terminationGracePeriodSeconds must be at least ${MIN_GRACE_SECONDS[component]} (the drain)`);
    if (pod.automountServiceAccountToken !== false) problem(where, 'the relay does not call the Kubernetes API: set automountServiceAccountToken: false');
    for (const container of pod.containers ?? []) {
      checkContainer(where, container, pod, { probes: true });
      if (!(container.ports ?? []).some((port: Manifest) => port.containerPort === METRICS_PORT))
        problem(where, `container ${container.name} does not declare the metrics port ${METRICS_PORT}`);
      for (const from of container.envFrom ?? [])
        if (from.configMapRef && !configMaps.has(from.configMapRef.name)) problem(where, `envFrom names a missing ConfigMap ${from.configMapRef.name}`);
      for (const env of container.env ?? []) {
        const ref = env.valueFrom?.secretKeyRef;
        // An optional key (a setting the relay runs without) may be absent from the Secret.
        if (ref && ref.optional !== true && !(secrets.get(ref.name) ?? {})[ref.key])
          problem(where, `env ${env.name} names a missing Secret key ${ref.name}/${ref.key}`);
      }
    }
    checkNatsCredential(where, component, pod, secrets.get(NATS_CREDENTIALS_SECRET));
    if (component !== 'edge' && !(pod.containers ?? []).some((container: Manifest) => container.env?.some((env: Manifest) => env.name === 'DATABASE_URL'))) {
      problem(where, 'needs DATABASE_URL');
    }
    if (!byKind('PodDisruptionBudget').some((budget) => matches(budget.spec?.selector?.matchLabels, template.metadata?.labels)))
      problem(where, 'no PodDisruptionBudget selects its pods');
  }
  for (const autoscaled of ['edge', 'tasks']) {
    const hpa = byKind('HorizontalPodAutoscaler').find((manifest) => manifest.spec?.scaleTargetRef?.name === `agentrelay-${autoscaled}`);
    if (!hpa) problem(source, `no HorizontalPodAutoscaler for agentrelay-${autoscaled}`);
    else if (!deployments.some((deployment) => deployment.metadata.name === hpa.spec.scaleTargetRef.name && hpa.spec.scaleTargetRef.kind === 'Deployment')) {
      problem(source, `HorizontalPodAutoscaler ${hpa.metadata.name} targets no Deployment`);
    } else if (!(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas > hpa.spec.minReplicas))
      problem(source, `HorizontalPodAutoscaler ${hpa.metadata.name} needs 2 <= minReplicas < maxReplicas`);
  }
  const jobs = byKind('Job');
  if (jobs.length !== 1) problem(source, 'expected one migrate Job');
  for (const job of jobs) {
    const pod = job.spec?.template?.spec ?? {};
    if (!['OnFailure', 'Never'].includes(pod.restartPolicy)) problem(`${source} Job`, 'restartPolicy must be OnFailure or Never');
    for (const container of pod.containers ?? []) checkContainer(`${source} Job`, container, pod, { probes: false });
  }
  const services = byKind('Service');
  if (services.length !== 1) problem(source, 'expected exactly one Service, the edge');
  for (const service of services) {
    const edge = deployments.find((deployment) => deployment.metadata.name === 'agentrelay-edge');
    if (!edge || !matches(service.spec?.selector, edge.spec?.template?.metadata?.labels))
      problem(`${source} Service ${service.metadata.name}`, 'does not select the edge pods');
    if (service.spec?.type && service.spec.type !== 'ClusterIP' && service.spec.type !== 'LoadBalancer')
      problem(`${source} Service`, `unexpected type ${service.spec.type}`);
  }
  // Only the edge's HTTP port is open to everyone; everything else only to the metrics scraper.
  const policies = byKind('NetworkPolicy');
  const denyAll = policies.find(
    (policy) =>
      matches(policy.spec?.podSelector?.matchLabels, { 'app.kubernetes.io/name': 'agentrelay' }) &&
      policy.spec?.policyTypes?.includes('Ingress') &&
      !policy.spec?.ingress,
  );
  if (!denyAll) problem(source, 'no NetworkPolicy denies ingress to every relay pod by default');
  for (const policy of policies) {
    for (const rule of policy.spec?.ingress ?? []) {
      const open = !rule.from || rule.from.length === 0;
      const selectsOnlyEdge = policy.spec?.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'edge';
      const ports = (rule.ports ?? []).map((port: Manifest) => port.port);
      if (open && !(selectsOnlyEdge && ports.length === 1 && ports[0] === 8080))
        problem(`${source} NetworkPolicy ${policy.metadata.name}`, 'opens ingress from anywhere to something other than the edge HTTP port');
    }
  }
}

/** Metric names the relay's processes expose: every group of libs/metrics plus prom-client's defaults. */
function exposedMetricNames(): Set<string> {
  const registry: Registry = createMetricsRegistry();
  new HttpMetrics(registry);
  new NatsClientMetrics(registry);
  new NatsHandlerMetrics(registry);
  new PostgresPoolMetrics(registry);
  new OutboxMetrics(registry);
  new JetStreamConsumerMetrics(registry);
  new DeliveryMetrics(registry, []);
  new RetentionMetrics(registry);
  // The services' org quota metrics share the rejection counter's name with the edge's: a registry of their own.
  const services: Registry = createMetricsRegistry();
  new OrgQuotaMetrics(services);
  const names = new Set<string>();
  for (const metric of [...registry.getMetricsAsArray(), ...services.getMetricsAsArray()] as unknown as Array<{ name: string; type: string }>) {
    names.add(metric.name);
    if (metric.type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  return names;
}

const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'by',
  'without',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'clamp_min',
  'le',
  'on',
  'ignoring',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'label_values',
]);

/** The metric names an expression uses (identifiers outside label matchers and strings, not functions or keywords). */
function metricsIn(expression: string): string[] {
  const withoutLabels = expression
    .replace(/\{[^}]*\}/g, '')
    .replace(/"[^"]*"/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\$\w+/g, '');
  const withoutGroupings = withoutLabels.replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '').replace(/(^|[^\w.])\d+(\.\d+)?(e[+-]?\d+)?/gi, '$1');
  return (withoutGroupings.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []).filter((word) => !PROMQL_WORDS.has(word));
}

function checkExpressions(where: string, expressions: string[], known: Set<string>, used: Set<string>): void {
  if (expressions.length === 0) problem(where, 'has no expressions');
  for (const expression of expressions) {
    for (const name of metricsIn(expression)) {
      used.add(name.replace(/_(bucket|sum|count)$/, ''));
      if (!known.has(name)) problem(where, `uses ${name}, which no relay process exposes: ${expression}`);
    }
  }
}

function checkDashboardAndAlerts(): void {
  const known = exposedMetricNames();
  const used = new Set<string>();
  let dashboard: Manifest;
  try {
    dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Manifest;
  } catch (error) {
    problem(DASHBOARD, `is not JSON: ${(error as Error).message}`);
    return;
  }
  if (typeof dashboard.title !== 'string' || !Array.isArray(dashboard.panels)) problem(DASHBOARD, 'needs a title and panels');
  const ids = new Set<number>();
  const expressions: string[] = [];
  for (const panel of dashboard.panels ?? []) {
    if (ids.has(panel.id)) problem(DASHBOARD, `panel id ${panel.id} used twice`);
    ids.add(panel.id);
    if (panel.type === 'row') continue;
    if (!panel.gridPos || !panel.title) problem(DASHBOARD, `panel ${panel.id} needs a title and a gridPos`);
    for (const target of panel.targets ?? []) expressions.push(target.expr);
  }
  checkExpressions(DASHBOARD, expressions, known, used);
  const relayMetrics = [...known].filter((name) => name.startsWith('agentrelay_') && !/_(bucket|sum|count)$/.test(name));
  for (const name of relayMetrics) if (!used.has(name)) problem(DASHBOARD, `shows nothing of ${name}`);

  const rules = parseYaml(readFileSync(ALERTS, 'utf8')) as Manifest;
  const alertNames = new Set<string>();
  for (const group of rules?.groups ?? []) {
    for (const rule of group.rules ?? []) {
      const where = `${ALERTS} ${rule.alert ?? '(no name)'}`;
      if (!rule.alert || !/^[A-Z][A-Za-z0-9]*$/.test(rule.alert)) problem(where, 'needs an alert name in CamelCase');
      if (alertNames.has(rule.alert)) problem(where, 'defined twice');
      alertNames.add(rule.alert);
      if (!['critical', 'warning', 'info'].includes(rule.labels?.severity)) problem(where, 'needs labels.severity critical, warning or info');
      if (!rule.annotations?.summary) problem(where, 'needs annotations.summary');
      if (rule.for !== undefined && !/^\d+[smh]$/.test(rule.for)) problem(where, `bad 'for': ${rule.for}`);
      checkExpressions(where, [String(rule.expr ?? '')], known, new Set());
    }
  }
  const required: Array<[string, RegExp]> = [
    ['outbox age', /agentrelay_outbox_oldest_unpublished_age_seconds/],
    ['dead letters growing', /increase\(agentrelay_delivery_dead_letters_total/],
    ['5xx rate', /status_class="5xx"/],
    ['NATS request timeouts', /agentrelay_nats_client_requests_total\{outcome=~"timeout/],
    ['consumer lag', /agentrelay_jetstream_consumer_pending_messages/],
  ];
  const allExpressions = (rules?.groups ?? []).flatMap((group: Manifest) => (group.rules ?? []).map((rule: Manifest) => String(rule.expr)));
  for (const [what, pattern] of required) if (!allExpressions.some((expression: string) => pattern.test(expression))) problem(ALERTS, `no alert on ${what}`);
}

/** The largest rendering accepted from kubectl, and how long it may take. */
const KUBECTL_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const KUBECTL_TIMEOUT_MS = 60_000;

function manifestKey(manifest: Manifest): string {
  return `${manifest.kind}/${manifest.metadata?.namespace ?? ''}/${manifest.metadata?.name}`;
}

/** `kubectl kustomize <directory>`, parsed; null (and a problem recorded) when it cannot be rendered. */
async function kubectlKustomize(directory: string): Promise<Manifest[] | null> {
  let output: string;
  try {
    ({ stdout: output } = await promisify(execFile)('kubectl', ['kustomize', directory], {
      encoding: 'utf8',
      maxBuffer: KUBECTL_MAX_OUTPUT_BYTES,
      timeout: KUBECTL_TIMEOUT_MS,
    }));
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
    if (failure.code === 'ENOENT')
      problem(directory, 'kubectl is not installed (on the PATH): the manifests are rendered with `kubectl kustomize`, install kubectl to check them');
    else if (failure.killed) problem(directory, `kubectl kustomize did not finish within ${KUBECTL_TIMEOUT_MS / 1000} s`);
    else problem(directory, `kubectl kustomize failed: ${failure.stderr?.trim() || failure.message}`);
    return null;
  }
  const manifests: Manifest[] = [];
  for (const document of parseAllDocuments(output)) {
    if (document.errors.length > 0) {
      problem(directory, `kubectl kustomize rendered YAML that does not parse: ${document.errors.map((parseError) => parseError.message).join('; ')}`);
      return null;
    }
    const manifest = document.toJS() as Manifest | null;
    if (manifest !== null && manifest !== undefined) manifests.push(manifest);
  }
  return manifests;
}

for (const directory of KUSTOMIZATIONS) {
  const rendered = await kubectlKustomize(directory);
  if (rendered === null) continue;
  checkManifests(directory, rendered);
  console.log(`[deploy] ${directory}: ${rendered.length} manifests rendered by kubectl kustomize`);
}
checkDashboardAndAlerts();

if (problems.length > 0) {
  for (const line of problems) console.error(`[deploy] ${line}`);
  process.exit(1);
}
console.log(`[deploy] manifests, dashboard and alert rules OK`);
