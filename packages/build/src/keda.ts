import { InvalidArgument } from '@tiffin/core/internal';

/** What the KEDA `ScaledObject` is written from (resolved manifest options and the objects' names). */
export interface KedaSettings {
  /** The Deployment's (and the ScaledObject's) name. */
  name: string;
  /** The service's own name, as its metrics label it (`service_name`). */
  serviceName: string;
  minReplicas: number;
  maxReplicas: number;
  /** The manifest's `tasks` option, already checked. */
  tasks: string;
  /** The Redis Deployment's name when `tasks` is `redis`. */
  redisHost: string;
  prometheusServer: string;
  /** Waiting tasks per replica KEDA aims at. */
  queueTarget: number;
  /** Calls in flight per replica KEDA aims at. */
  inFlightTarget: number;
}

/** The Prometheus a cluster's kube-prometheus-stack serves (namespace `monitoring`). */
export const DEFAULT_PROMETHEUS_SERVER = 'http://prometheus-operated.monitoring.svc:9090';

/**
 * The wait list of a service's queue in the Redis task store (`@tiffin/tasks-redis`: BullMQ keys
 * `tiffin:<queue>:<name>`; `tiffin serve` names the queue after the service): the tasks no replica has claimed.
 */
export function redisTasksWaitList(serviceName: string): string {
  return `tiffin:${serviceName}:wait`;
}

interface Trigger {
  type: string;
  name: string;
  metricType?: string;
  metadata: Record<string, string>;
}

/** A Redis trigger's address (`host:port`), database and TLS, from where the tasks live; none off Redis. */
function redisTarget(
  tasks: string,
  redisHost: string,
): { address: string; databaseIndex: string; tls: boolean } | undefined {
  if (tasks === 'redis') return { address: `${redisHost}:6379`, databaseIndex: '0', tls: false };
  if (!/^rediss?:\/\//.test(tasks)) return undefined;
  const url = new URL(tasks);
  const db = /^\/(\d+)$/.exec(url.pathname)?.[1] ?? '0';
  return {
    address: `${url.hostname}:${url.port || '6379'}`,
    databaseIndex: db,
    tls: url.protocol === 'rediss:',
  };
}

/** A PromQL label matcher's value: backslashes and quotes escaped. */
function promString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * Whether the scaler can wake a Deployment scaled to zero: only a trigger that reads outside the pods (the
 * Redis wait list) sees work while no replica runs; the service's own metrics vanish with its last pod.
 */
export function checkKedaMinimum(minReplicas: number, tasks: string, autoscale: string): void {
  if (minReplicas !== 0) return;
  if (autoscale !== 'keda')
    throw new InvalidArgument('minReplicas 0 (scale to zero) needs the KEDA autoscaler (--autoscale keda)');
  if (redisTarget(tasks, 'x') === undefined)
    throw new InvalidArgument(
      `minReplicas 0 (scale to zero) needs tasks on a Redis KEDA can read (--tasks redis or a redis:// URL), not '${tasks}': with no replica running, nothing else tells KEDA that work is waiting`,
    );
}

/**
 * A KEDA `ScaledObject` (keda.sh/v1alpha1) for the Deployment: one trigger on the task queue (the Redis store's
 * wait list, or the service's own `tiffin_api_server_tasks_queued` in Prometheus when tasks are not on a Redis
 * KEDA can reach) and one on the calls in flight (`tiffin_api_server_request_in_progress`). KEDA runs the HPA
 * itself, so it replaces the CPU one.
 */
export function kedaScaledObject(
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> },
  settings: KedaSettings,
) {
  const service = promString(settings.serviceName);
  const redis = redisTarget(settings.tasks, settings.redisHost);
  const queue: Trigger = redis
    ? {
        type: 'redis',
        name: 'task-queue',
        metadata: {
          address: redis.address,
          listName: redisTasksWaitList(settings.serviceName),
          listLength: String(settings.queueTarget),
          activationListLength: '0',
          databaseIndex: redis.databaseIndex,
          ...(redis.tls ? { enableTLS: 'true' } : {}),
        },
      }
    : {
        type: 'prometheus',
        name: 'task-queue',
        metadata: {
          serverAddress: settings.prometheusServer,
          // A shared store (a Redis URL in a Secret) reports the whole queue from every replica: one each.
          query: settings.tasks.startsWith('secret:')
            ? `sum(max by (api_name) (tiffin_api_server_tasks_queued{service_name=${service}}))`
            : `sum(tiffin_api_server_tasks_queued{service_name=${service}})`,
          threshold: String(settings.queueTarget),
        },
      };
  const inFlight: Trigger = {
    type: 'prometheus',
    name: 'in-flight',
    metadata: {
      serverAddress: settings.prometheusServer,
      query: `sum(tiffin_api_server_request_in_progress{service_name=${service}})`,
      threshold: String(settings.inFlightTarget),
    },
  };
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: settings.name },
      minReplicaCount: settings.minReplicas,
      maxReplicaCount: settings.maxReplicas,
      pollingInterval: 15,
      cooldownPeriod: 300,
      triggers: [queue, inFlight],
    },
  };
}
