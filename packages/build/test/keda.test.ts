import { readFileSync } from 'node:fs';
import { InvalidArgument } from '@tiffin/core';
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type KubernetesObject, kubernetesManifests, kubernetesYaml } from '../src/index.js';

/**
 * KEDA's own schema of a ScaledObject (its CRD's openAPIV3Schema, `shared/keda/PROVENANCE.md`). The API server
 * prunes fields a structural schema does not name; here every object that lists its properties is closed, so a
 * misspelt field fails instead of vanishing.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = closed(value);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const schema = closed(
  JSON.parse(
    readFileSync(new URL('../../../shared/keda/scaledobject-v1alpha1.schema.json', import.meta.url), 'utf8'),
  ),
) as object;
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('int32', /^-?\d+$/);
ajv.addFormat('int64', /^-?\d+$/);
ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T/);
const validateScaledObject = ajv.compile(schema);

interface Trigger {
  type: string;
  name: string;
  metadata: Record<string, string>;
}
interface ScaledObject extends KubernetesObject {
  spec: {
    scaleTargetRef: { name: string; kind: string };
    minReplicaCount: number;
    maxReplicaCount: number;
    triggers: Trigger[];
  };
}

/** The manifests as kubectl reads them (the YAML, parsed back); the ScaledObject checked against KEDA's schema. */
function scaledObject(options: Parameters<typeof kubernetesManifests>[2]): {
  objects: KubernetesObject[];
  keda: ScaledObject;
} {
  const yaml = kubernetesYaml(kubernetesManifests('my_service', '1.0.0', options), 'test');
  const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubernetesObject);
  const keda = objects.find((o) => o.kind === 'ScaledObject') as ScaledObject;
  expect(keda.apiVersion).toBe('keda.sh/v1alpha1');
  const valid = validateScaledObject(keda);
  expect(valid, JSON.stringify(validateScaledObject.errors as ErrorObject[] | null)).toBe(true);
  return { objects, keda };
}

describe('--autoscale keda', () => {
  it('the schema refuses what KEDA would refuse (the validator is not a yes-machine)', () => {
    const { keda } = scaledObject({ autoscale: 'keda' });
    expect(validateScaledObject({ ...keda, spec: { ...keda.spec, triggers: [] } })).toBe(false);
    expect(validateScaledObject({ ...keda, spec: { ...keda.spec, minReplicaCnt: 1 } })).toBe(false);
    const numeric = { ...keda.spec.triggers[0], metadata: { threshold: 5 } };
    expect(validateScaledObject({ ...keda, spec: { ...keda.spec, triggers: [numeric] } })).toBe(false);
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
