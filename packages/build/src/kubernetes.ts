import { InvalidArgument } from '@tiffin/core/internal';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { IService } from 'kubernetes-models/v1/Service';
import { stringify } from 'yaml';
import { checkKedaMinimum, DEFAULT_PROMETHEUS_SERVER, kedaScaledObject } from './keda.js';
import { kubernetesLabelValue, kubernetesName, SERVICE_NAME_ANNOTATION } from './kubernetes-names.js';
import { CONTAINER_PORT, CONTAINER_UID } from './runtime-files.js';

/** What the generated manifests may be told; every field has a default (see DEFAULT_KUBERNETES_OPTIONS). */
export interface KubernetesOptions {
  /** Image reference the Deployment runs; default `<name>:<version>` (what `tiffin containerize` tags). */
  image?: string;
  /** Replicas at start and the autoscaler's minimum (unless `minReplicas` says otherwise). */
  replicas?: number;
  /** The autoscaler's minimum when not `replicas`: 0 scales to zero (KEDA on a Redis task queue only). */
  minReplicas?: number;
  /** The autoscaler's maximum. */
  maxReplicas?: number;
  /**
   * `cpu` (default): a HorizontalPodAutoscaler on CPU use; `keda`: a KEDA ScaledObject on the task queue and
   * the calls in flight (KEDA installed in the cluster).
   */
  autoscale?: 'cpu' | 'keda';
  /** The Prometheus KEDA asks for the service's own metrics (`--autoscale keda`). */
  prometheusServer?: string;
  /** Waiting tasks per replica KEDA aims at. */
  targetQueueLength?: number;
  /** Calls in flight per replica KEDA aims at. */
  targetInFlight?: number;
  /** Average CPU use, in percent of the request, that the autoscaler aims at. */
  targetCpuPercent?: number;
  cpuRequest?: string;
  memoryRequest?: string;
  cpuLimit?: string;
  memoryLimit?: string;
  /** Seconds the start-up probe waits for the first ready answer (slow model loads need more). */
  startupSeconds?: number;
  /**
   * Where the service's tasks (`task: true` APIs) live, as `TIFFIN_TASKS_URL` in the Deployment: `disk`
   * (default: in the pod, its own), `memory`, `redis` (a Redis Deployment and Service written beside the
   * service), `secret:NAME` or `secret:NAME/KEY` (a Redis URL kept in that Secret, under `url` by default:
   * a managed Redis), or a `redis://` URL without a password (one with a password belongs in a Secret).
   */
  tasks?: string;
  /** The service has task APIs: then more than one replica needs tasks on Redis (replicas share them). */
  taskApis?: boolean;
}

export const DEFAULT_KUBERNETES_OPTIONS = {
  replicas: 1,
  maxReplicas: 5,
  autoscale: 'cpu',
  prometheusServer: DEFAULT_PROMETHEUS_SERVER,
  targetQueueLength: 5,
  targetInFlight: 4,
  targetCpuPercent: 80,
  cpuRequest: '250m',
  memoryRequest: '256Mi',
  cpuLimit: '1',
  memoryLimit: '512Mi',
  startupSeconds: 300,
  tasks: 'disk',
  taskApis: false,
} as const satisfies Required<Omit<KubernetesOptions, 'image' | 'minReplicas'>>;

/** One Kubernetes object as written to YAML. */
export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: unknown;
}

/** A quantity as Kubernetes writes them: `500m`, `2`, `1.5`, `256Mi`, `1G`. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

export type ResolvedKubernetesOptions = Required<Omit<KubernetesOptions, 'image'>> &
  Pick<KubernetesOptions, 'image'>;

type GivenDefaults = Omit<ResolvedKubernetesOptions, 'minReplicas'> & { minReplicas?: number };

/** The options with their defaults filled in; a bad value is an InvalidArgument naming it. */
export function resolveKubernetesOptions(given: KubernetesOptions = {}): ResolvedKubernetesOptions {
  const merged: GivenDefaults = { ...DEFAULT_KUBERNETES_OPTIONS, ...definedOnly(given) };
  const options: ResolvedKubernetesOptions = {
    ...merged,
    minReplicas: merged.minReplicas ?? merged.replicas,
  };
  const positive = (name: string, value: number) => {
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgument(`${name} must be a whole number of at least 1, got ${value}`);
  };
  positive('replicas', options.replicas);
  positive('maxReplicas', options.maxReplicas);
  positive('targetCpuPercent', options.targetCpuPercent);
  positive('targetQueueLength', options.targetQueueLength);
  positive('targetInFlight', options.targetInFlight);
  if (options.autoscale !== 'cpu' && options.autoscale !== 'keda')
    throw new InvalidArgument(`autoscale must be cpu or keda, got '${options.autoscale}'`);
  if (!/^https?:\/\/[^\s]+$/.test(options.prometheusServer))
    throw new InvalidArgument(`prometheusServer '${options.prometheusServer}' is not an http(s) URL`);
  if (!Number.isInteger(options.minReplicas) || options.minReplicas < 0)
    throw new InvalidArgument(`minReplicas must be a whole number of at least 0, got ${options.minReplicas}`);
  if (options.minReplicas > options.replicas)
    throw new InvalidArgument(
      `minReplicas (${options.minReplicas}) must be at most replicas (${options.replicas})`,
    );
  positive('startupSeconds', options.startupSeconds);
  if (options.maxReplicas < options.replicas)
    throw new InvalidArgument(
      `maxReplicas (${options.maxReplicas}) must be at least replicas (${options.replicas})`,
    );
  for (const key of ['cpuRequest', 'memoryRequest', 'cpuLimit', 'memoryLimit'] as const) {
    if (!QUANTITY.test(options[key]))
      throw new InvalidArgument(
        `${key} '${options[key]}' is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 4Gi)`,
      );
  }
  if (options.image !== undefined && !/^[^\s]+$/.test(options.image))
    throw new InvalidArgument(`image '${options.image}' is not an image reference`);
  tasksEnv(options.tasks, 'check');
  checkKedaMinimum(options.minReplicas, options.tasks, options.autoscale);
  if (options.taskApis && !isSharedTasks(options.tasks)) {
    // Replicas of their own would each keep their own tasks: a status asked of another one answers 404.
    if (options.replicas > 1 || (given.maxReplicas ?? 1) > 1)
      throw new InvalidArgument(
        `The service has task APIs, kept by each replica on its own with tasks '${options.tasks}': more than one replica needs them on Redis (--tasks redis, --tasks secret:NAME or --tasks redis://host:6379/0)`,
      );
    options.maxReplicas = 1;
  }
  return options;
}

/**
 * Deployment, Service, HorizontalPodAutoscaler (or with `autoscale: 'keda'` a KEDA ScaledObject) and PodDisruptionBudget for the image of package
 * `<name>:<version>`. Object, container and label names are the service name made legal for Kubernetes
 * (`kubernetesName`); the service name itself stays in the `tiffin/service-name` annotation. The pod runs as the image's non-root user with a read-only root filesystem (only
 * /tmp, where TIFFIN_HOME points, is writable), no privilege escalation and no capabilities.
 */
export function kubernetesManifests(
  name: string,
  version: string,
  options: KubernetesOptions = {},
): KubernetesObject[] {
  const settings = resolveKubernetesOptions(options);
  const image = settings.image ?? `${name}:${version}`;
  const serviceName = name;
  name = kubernetesName(serviceName);
  const selector = { 'app.kubernetes.io/name': name };
  const labels = {
    ...selector,
    'app.kubernetes.io/version': kubernetesLabelValue(version),
    'app.kubernetes.io/managed-by': 'tiffin',
  };
  const annotations = { [SERVICE_NAME_ANNOTATION]: serviceName };
  const metadata = { name, labels, annotations };
  const probe = (path: string, periodSeconds: number, failureThreshold: number): IProbe => ({
    httpGet: { path, port: 'http' },
    periodSeconds,
    timeoutSeconds: 3,
    failureThreshold,
  });
  const startupPeriod = 5;

  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: settings.replicas,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels, annotations },
        spec: {
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: CONTAINER_UID,
            runAsGroup: CONTAINER_UID,
            fsGroup: CONTAINER_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name,
              image,
              imagePullPolicy: 'IfNotPresent',
              ports: [{ name: 'http', containerPort: CONTAINER_PORT, protocol: 'TCP' }],
              env: [
                { name: 'HOST', value: '0.0.0.0' },
                { name: 'PORT', value: String(CONTAINER_PORT) },
                ...tasksEnv(settings.tasks, redisName(serviceName)),
              ],
              // Start-up (model loading) may take minutes; liveness and readiness only count after it.
              startupProbe: probe(
                '/readyz',
                startupPeriod,
                Math.ceil(settings.startupSeconds / startupPeriod),
              ),
              readinessProbe: probe('/readyz', 5, 3),
              livenessProbe: probe('/livez', 10, 3),
              resources: {
                requests: { cpu: settings.cpuRequest, memory: settings.memoryRequest },
                limits: { cpu: settings.cpuLimit, memory: settings.memoryLimit },
              },
              securityContext: LOCKED_DOWN_CONTAINER,
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  } satisfies IDeployment;

  const service = clusterIpService(metadata, selector, 'http', 80);

  const autoscaler =
    settings.autoscale === 'keda'
      ? kedaScaledObject(metadata, {
          name,
          serviceName,
          minReplicas: settings.minReplicas,
          maxReplicas: settings.maxReplicas,
          tasks: settings.tasks,
          redisHost: redisName(serviceName),
          prometheusServer: settings.prometheusServer,
          queueTarget: settings.targetQueueLength,
          inFlightTarget: settings.targetInFlight,
        })
      : ({
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata,
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
            minReplicas: settings.minReplicas,
            maxReplicas: settings.maxReplicas,
            metrics: [
              {
                type: 'Resource',
                resource: {
                  name: 'cpu',
                  target: { type: 'Utilization', averageUtilization: settings.targetCpuPercent },
                },
              },
            ],
          },
        } satisfies IHorizontalPodAutoscaler);

  // maxUnavailable (not minAvailable) so a single replica never blocks a node drain forever.
  const disruptionBudget = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata,
    spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
  } satisfies IPodDisruptionBudget;

  const objects: KubernetesObject[] = [deployment, service, autoscaler, disruptionBudget];
  if (settings.tasks === 'redis') objects.push(...redisManifests(serviceName, labels));
  return objects;
}

/** The Redis objects' name beside the service's. */
/** A container that cannot gain privileges, write its root filesystem or use any Linux capability. */
const LOCKED_DOWN_CONTAINER = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** A cluster-internal Service in front of the pods `selector` picks, one named TCP port. */
function clusterIpService(
  metadata: KubernetesObject['metadata'],
  selector: Record<string, string>,
  portName: string,
  port: number,
): IService & KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: portName, port, targetPort: portName, protocol: 'TCP' }],
    },
  };
}

function redisName(serviceName: string): string {
  return kubernetesName(`${serviceName}-redis`);
}

/** Port of the Redis written beside the service. */
const REDIS_PORT = 6379;
/** The Redis image's own user (redis:7-alpine). */
const REDIS_UID = 999;

/** Whether tasks so placed are shared by every replica. */
function isSharedTasks(tasks: string): boolean {
  return tasks === 'redis' || tasks.startsWith('secret:') || /^rediss?:\/\//.test(tasks);
}

/**
 * `TIFFIN_TASKS_URL` for the Deployment (none for `disk`, the default), or with `redis` `'check'` only
 * checks the value (an InvalidArgument naming what is accepted).
 */
function tasksEnv(tasks: string, redis: string): IEnvVar[] {
  const env = (value: string): IEnvVar[] => [{ name: 'TIFFIN_TASKS_URL', value }];
  if (tasks === 'disk') return [];
  if (tasks === 'memory') return env('memory');
  if (tasks === 'redis') return env(`redis://${redis}:${REDIS_PORT}/0`);
  const secret = /^secret:([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)(?:\/([-._a-zA-Z0-9]{1,253}))?$/.exec(tasks);
  if (secret)
    return [
      {
        name: 'TIFFIN_TASKS_URL',
        valueFrom: { secretKeyRef: { name: secret[1] as string, key: secret[3] ?? 'url' } },
      },
    ];
  let url: URL | undefined;
  try {
    url = /^rediss?:\/\//.test(tasks) ? new URL(tasks) : undefined;
  } catch {
    url = undefined;
  }
  if (!url?.hostname)
    throw new InvalidArgument(
      `tasks '${tasks}': use disk, memory, redis (a Redis beside the service), secret:NAME[/KEY] or a redis://host:port/db URL`,
    );
  if (url.password)
    throw new InvalidArgument(
      'tasks: a Redis URL with a password would be written into the manifest; keep it in a Secret and give --tasks secret:NAME[/KEY]',
    );
  return env(tasks);
}

/**
 * A Redis for the service's tasks, beside it: one replica (BullMQ needs one primary), append-only file on an
 * emptyDir (kept across container restarts, not across the pod's replacement: a managed Redis, or a volume
 * claim in its place, keeps tasks through that), `noeviction` as BullMQ requires.
 */
function redisManifests(serviceName: string, serviceLabels: Record<string, string>): KubernetesObject[] {
  const name = redisName(serviceName);
  const selector = { 'app.kubernetes.io/name': name };
  const labels = {
    ...serviceLabels,
    ...selector,
    'app.kubernetes.io/component': 'tasks',
    'app.kubernetes.io/part-of': kubernetesName(serviceName),
  };
  const metadata = { name, labels, annotations: { [SERVICE_NAME_ANNOTATION]: serviceName } };
  const ping: IProbe = { exec: { command: ['redis-cli', 'ping'] }, periodSeconds: 10, timeoutSeconds: 3 };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      // Never two primaries at once on one queue.
      strategy: { type: 'Recreate' },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: REDIS_UID,
            runAsGroup: REDIS_UID,
            fsGroup: REDIS_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'redis',
              image: 'redis:7-alpine',
              imagePullPolicy: 'IfNotPresent',
              args: ['--appendonly', 'yes', '--maxmemory-policy', 'noeviction', '--dir', '/data'],
              ports: [{ name: 'redis', containerPort: REDIS_PORT, protocol: 'TCP' }],
              readinessProbe: ping,
              livenessProbe: ping,
              resources: {
                requests: { cpu: '100m', memory: '128Mi' },
                limits: { cpu: '1', memory: '512Mi' },
              },
              securityContext: LOCKED_DOWN_CONTAINER,
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
        },
      },
    },
  } satisfies IDeployment;
  const service = clusterIpService(metadata, selector, 'redis', REDIS_PORT);
  return [deployment, service];
}

/**
 * A KServe `InferenceService` (serving.kserve.io/v1beta1) running the same image as a custom predictor,
 * for clusters with KServe installed. The predictor's container is a plain Kubernetes container.
 */
export function inferenceServiceManifest(
  name: string,
  version: string,
  options: KubernetesOptions = {},
): KubernetesObject {
  const [deployment] = kubernetesManifests(name, version, options) as [IDeployment];
  const settings = resolveKubernetesOptions(options);
  const pod = deployment.spec?.template.spec;
  const container = pod?.containers[0];
  return {
    apiVersion: 'serving.kserve.io/v1beta1',
    kind: 'InferenceService',
    metadata: deployment.metadata as KubernetesObject['metadata'],
    spec: {
      predictor: {
        minReplicas: settings.replicas,
        maxReplicas: settings.maxReplicas,
        securityContext: pod?.securityContext,
        // KServe routes to the container named kserve-container on its first port.
        containers: [{ ...container, name: 'kserve-container' }],
        volumes: pod?.volumes,
      },
    },
  };
}

/** The manifests as one multi-document YAML file. */
export function kubernetesYaml(objects: readonly KubernetesObject[], header: string): string {
  return `# ${header}\n${objects.map((object) => stringify(object)).join('---\n')}`;
}

function definedOnly(options: KubernetesOptions): Partial<KubernetesOptions> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
