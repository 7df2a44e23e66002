import {
  type IScaledObject,
  ScaledObject as KedaScaledObject,
} from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { InvalidArgument } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type KubernetesObject, kubernetesManifests, kubernetesYaml } from '../src/index.js';

type Spec = IScaledObject['spec'];
type Trigger = Spec['triggers'][number];
interface ScaledObject extends KubernetesObject {
  spec: Spec;
}

/**
 * The fields KEDA's CRD declares, taken from `@kubernetes-models/keda`'s types (generated from the CRD of KEDA
 * v2.10.1): a `Record` over `keyof` fails to compile when a field is missing or extra, so each list is exactly
 * the CRD's. Its validator, like the API server, lets unknown fields through (they are pruned, silently), so a
 * misspelt field is refused here against these lists.
 */
const declared: { object: Record<keyof IScaledObject, true>; spec: Record<keyof Spec, true> } = {
  object: { apiVersion: true, kind: true, metadata: true, spec: true, status: true },
  spec: {
    advanced: true,
    cooldownPeriod: true,
    fallback: true,
    idleReplicaCount: true,
    maxReplicaCount: true,
    minReplicaCount: true,
    pollingInterval: true,
    scaleTargetRef: true,
    triggers: true,
  },
};
const scaleTargetRefKeys: Record<keyof Spec['scaleTargetRef'], true> = {
  apiVersion: true,
  envSourceContainerName: true,
  kind: true,
  name: true,
};
const triggerKeys: Record<keyof Trigger, true> = {
  authenticationRef: true,
  metadata: true,
  metricType: true,
  name: true,
  type: true,
  useCachedMetrics: true,
};

function undeclared(value: object, keys: object): string[] {
  return Object.keys(value).filter((key) => !Object.hasOwn(keys, key));
}

/** Throws when KEDA's CRD refuses the object (its validator) or does not declare one of its fields. */
function checkScaledObject(object: ScaledObject): void {
  new KedaScaledObject(object as unknown as IScaledObject).validate();
  const unknown = [
    ...undeclared(object, declared.object),
    ...undeclared(object.spec, declared.spec).map((key) => `spec.${key}`),
    ...undeclared(object.spec.scaleTargetRef, scaleTargetRefKeys).map((key) => `spec.scaleTargetRef.${key}`),
    ...object.spec.triggers.flatMap((trigger, i) =>
      undeclared(trigger, triggerKeys).map((key) => `spec.triggers[${i}].${key}`),
    ),
  ];
  if (unknown.length > 0) throw new Error(`fields KEDA's CRD does not declare: ${unknown.join(', ')}`);
}

/** The manifests as kubectl reads them (the YAML, parsed back); the ScaledObject checked against KEDA's CRD. */
function scaledObject(options: Parameters<typeof kubernetesManifests>[2]): {
  objects: KubernetesObject[];
  keda: ScaledObject;
} {
  const yaml = kubernetesYaml(kubernetesManifests('my_service', '1.0.0', options), 'test');
  const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubernetesObject);
  const keda = objects.find((o) => o.kind === 'ScaledObject') as ScaledObject;
  expect(keda.apiVersion).toBe('keda.sh/v1alpha1');
  checkScaledObject(keda);
  return { objects, keda };
}

describe('--autoscale keda', () => {
  it("KEDA's CRD refuses what KEDA would refuse (the validator is not a yes-machine)", () => {
    const { keda } = scaledObject({ autoscale: 'keda' });
    const withSpec = (spec: object) => ({ ...keda, spec: { ...keda.spec, ...spec } }) as ScaledObject;
    const { triggers: _, ...noTriggers } = keda.spec;
    expect(() => checkScaledObject({ ...keda, spec: noTriggers } as ScaledObject)).toThrow(/triggers/);
    expect(() => checkScaledObject(withSpec({ minReplicaCount: '1' }))).toThrow(/minReplicaCount/);
    expect(() => checkScaledObject(withSpec({ minReplicaCnt: 1 }))).toThrow(/spec\.minReplicaCnt/);
    const numeric = { ...keda.spec.triggers[0], metadata: { threshold: 5 } };
    expect(() => checkScaledObject(withSpec({ triggers: [numeric] }))).toThrow(/threshold/);
    const misspelt = { ...keda.spec.triggers[0], metaData: {} };
    expect(() => checkScaledObject(withSpec({ triggers: [misspelt] }))).toThrow(/triggers\[0\]\.metaData/);
  });

  it('scales the Deployment on the Redis wait list and on the calls in flight, in place of the HPA', () => {
    const { objects, keda } = scaledObject({
      autoscale: 'keda',
      tasks: 'redis',
      replicas: 2,
      maxReplicas: 8,
      taskApis: true,
    });
    expect(objects.map((o) => o.kind)).not.toContain('HorizontalPodAutoscaler');
    expect(keda.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'my-service' });
    expect([keda.spec.minReplicaCount, keda.spec.maxReplicaCount]).toEqual([2, 8]);
    const [queue, inFlight] = keda.spec.triggers as [Trigger, Trigger];
    expect(queue.type).toBe('redis');
    expect(queue.metadata).toMatchObject({
      address: 'my-service-redis:6379',
      listName: 'tiffin:my_service:wait',
      databaseIndex: '0',
    });
    expect(inFlight.type).toBe('prometheus');
    expect(inFlight.metadata.query).toBe(
      'sum(tiffin_api_server_request_in_progress{service_name="my_service"})',
    );
  });

  it('reads a redis:// URL for the address, database and TLS', () => {
    const { keda } = scaledObject({ autoscale: 'keda', tasks: 'rediss://cache.internal:6380/3' });
    expect(keda.spec.triggers[0]?.metadata).toMatchObject({
      address: 'cache.internal:6380',
      databaseIndex: '3',
      enableTLS: 'true',
    });
  });

  it("without tasks on Redis, scales on the service's own queue metric in the given Prometheus", () => {
    const { keda } = scaledObject({ autoscale: 'keda', prometheusServer: 'http://prom.obs:9090' });
    const [queue] = keda.spec.triggers as [Trigger];
    expect(queue).toMatchObject({ type: 'prometheus', name: 'task-queue' });
    expect(queue.metadata).toEqual({
      serverAddress: 'http://prom.obs:9090',
      query: 'sum(tiffin_api_server_tasks_queued{service_name="my_service"})',
      threshold: '5',
    });
    // A shared store's replicas each report the whole queue: counted once.
    const shared = scaledObject({ autoscale: 'keda', tasks: 'secret:tasks-redis', maxReplicas: 3 });
    expect(shared.keda.spec.triggers[0]?.metadata.query).toBe(
      'sum(max by (api_name) (tiffin_api_server_tasks_queued{service_name="my_service"}))',
    );
  });

  it('scales to zero only when asked, and only on a queue KEDA reads with no replica running', () => {
    const { keda, objects } = scaledObject({
      autoscale: 'keda',
      tasks: 'redis',
      minReplicas: 0,
      maxReplicas: 3,
    });
    expect(keda.spec.minReplicaCount).toBe(0);
    expect(objects.find((o) => o.kind === 'Deployment')?.spec).toMatchObject({ replicas: 1 });
    expect(scaledObject({ autoscale: 'keda' }).keda.spec.minReplicaCount).toBe(1);
    expect(() => kubernetesManifests('s', '1', { autoscale: 'keda', minReplicas: 0 })).toThrow(
      InvalidArgument,
    );
    expect(() => kubernetesManifests('s', '1', { tasks: 'redis', minReplicas: 0 })).toThrow(/KEDA/);
  });

  it('refuses a bad autoscaler, Prometheus address or minimum', () => {
    // biome-ignore lint/suspicious/noExplicitAny: a caller in plain JavaScript may pass anything.
    expect(() => kubernetesManifests('s', '1', { autoscale: 'knative' as any })).toThrow(InvalidArgument);
    expect(() => kubernetesManifests('s', '1', { autoscale: 'keda', prometheusServer: 'prom:9090' })).toThrow(
      InvalidArgument,
    );
    expect(() => kubernetesManifests('s', '1', { replicas: 2, minReplicas: 3, maxReplicas: 4 })).toThrow(
      InvalidArgument,
    );
  });
});
