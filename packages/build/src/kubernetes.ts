import { InvalidArgument } from '@tiffin/core/internal';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { IService } from 'kubernetes-models/v1/Service';
import { stringify } from 'yaml';
import { kubernetesLabelValue, kubernetesName, SERVICE_NAME_ANNOTATION } from './kubernetes-names.js';
import { CONTAINER_PORT, CONTAINER_UID } from './runtime-files.js';

/** What the generated manifests may be told; every field has a default (see DEFAULT_KUBERNETES_OPTIONS). */
export interface KubernetesOptions {
  /** Image reference the Deployment runs; default `<name>:<version>` (what `tiffin containerize` tags). */
  image?: string;
  /** Replicas at start and the autoscaler's minimum. */
  replicas?: number;
  /** The autoscaler's maximum (scales on CPU use). */
  maxReplicas?: number;
  /** Average CPU use, in percent of the request, that the autoscaler aims at. */
  targetCpuPercent?: number;
  cpuRequest?: string;
  memoryRequest?: string;
  cpuLimit?: string;
  memoryLimit?: string;
  /** Seconds the start-up probe waits for the first ready answer (slow model loads need more). */
  startupSeconds?: number;
}

export const DEFAULT_KUBERNETES_OPTIONS = {
  replicas: 1,
  maxReplicas: 5,
  targetCpuPercent: 80,
  cpuRequest: '250m',
  memoryRequest: '256Mi',
  cpuLimit: '1',
  memoryLimit: '512Mi',
  startupSeconds: 300,
} as const satisfies Required<Omit<KubernetesOptions, 'image'>>;

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

/** The options with their defaults filled in; a bad value is an InvalidArgument naming it. */
export function resolveKubernetesOptions(given: KubernetesOptions = {}): ResolvedKubernetesOptions {
  const options: ResolvedKubernetesOptions = { ...DEFAULT_KUBERNETES_OPTIONS, ...definedOnly(given) };
  const positive = (name: string, value: number) => {
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgument(`${name} must be a whole number of at least 1, got ${value}`);
  };
  positive('replicas', options.replicas);
  positive('maxReplicas', options.maxReplicas);
  positive('targetCpuPercent', options.targetCpuPercent);
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
  return options;
}

/**
 * Deployment, Service, HorizontalPodAutoscaler and PodDisruptionBudget for the image of package
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
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  } satisfies IDeployment;

  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  } satisfies IService;

  const autoscaler = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      minReplicas: settings.replicas,
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
  } satisfies IHorizontalPodAutoscaler;

  // maxUnavailable (not minAvailable) so a single replica never blocks a node drain forever.
  const disruptionBudget = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata,
    spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
  } satisfies IPodDisruptionBudget;

  return [deployment, service, autoscaler, disruptionBudget];
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
