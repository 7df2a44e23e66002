import { InvalidArgument } from '@tiffin/core';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Container } from 'kubernetes-models/v1/Container';
import { PodSecurityContext } from 'kubernetes-models/v1/PodSecurityContext';
import { Service } from 'kubernetes-models/v1/Service';
import { Volume } from 'kubernetes-models/v1/Volume';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  DEFAULT_KUBERNETES_OPTIONS,
  inferenceServiceManifest,
  type KubernetesObject,
  kubernetesManifests,
  kubernetesName,
  kubernetesYaml,
} from '../src/index.js';

/**
 * The manifests are checked against the Kubernetes OpenAPI schemas as compiled by kubernetes-models
 * (ajv validators generated from the API server's OpenAPI document). Those schemas allow unknown fields,
 * so the source also types each object with the same package's interfaces (a misspelt field does not compile).
 */
const MODELS = {
  Deployment,
  Service,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
} as const;

function validate(object: KubernetesObject): void {
  const Model = MODELS[object.kind as keyof typeof MODELS];
  expect(Model, `no schema for ${object.kind}`).toBeDefined();
  // biome-ignore lint/suspicious/noExplicitAny: each model takes its own object type; the schema decides.
  new Model(object as any).validate();
}

/** What kubectl would read: the YAML file, parsed back. */
function roundTrip(objects: KubernetesObject[]): KubernetesObject[] {
  return parseAllDocuments(kubernetesYaml(objects, 'test')).map((d) => d.toJS() as KubernetesObject);
}

/** RFC 1035 label: what a Service name (the strictest of the objects written) and a container name must be. */
const DNS_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A label value. */
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

interface Named {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: {
    selector?: Record<string, string> & { matchLabels?: Record<string, string> };
    scaleTargetRef?: { name: string };
    template?: { metadata: { labels: Record<string, string> }; spec: { containers: { name: string }[] } };
    predictor?: { containers: { name: string }[] };
  };
}

/** The names and label values kubectl checks beyond the schema: objects, containers, targets, labels, selectors. */
function namesOf(object: KubernetesObject): { names: string[]; labelValues: string[] } {
  const { metadata, spec } = object as Named;
  const containers = spec?.template?.spec.containers ?? spec?.predictor?.containers ?? [];
  const names = [metadata.name, ...containers.map((c) => c.name)];
  if (spec?.scaleTargetRef) names.push(spec.scaleTargetRef.name);
  const { matchLabels, ...selector } = spec?.selector ?? {};
  const labelValues = [
    ...Object.values(metadata.labels ?? {}),
    ...Object.values(spec?.template?.metadata.labels ?? {}),
    ...Object.values(matchLabels ?? {}),
    ...Object.values(selector),
  ];
  return { names, labelValues };
}

describe('Kubernetes names', () => {
  it.each([
    ['iris_classifier', 'iris-classifier'],
    ['Quickstart', 'quickstart'],
    ['my.service', 'my-service'],
    ['iris', 'iris'],
  ])('%s → %s', (name, expected) => {
    expect(kubernetesName(name)).toBe(expected);
  });

  it.each(['2fast', '__x__', 'ünïcode_søk', '', 'a'.repeat(300), `${'b'.repeat(70)}_x`])(
    '%j becomes a legal, distinct name',
    (name) => {
      const legal = kubernetesName(name);
      expect(legal).toMatch(DNS_LABEL);
      expect(kubernetesName(`${name}2`)).not.toBe(legal);
    },
  );

  it('names every object, container, label and selector of `iris_classifier` legally and keeps the name in an annotation', () => {
    const objects = roundTrip([
      ...kubernetesManifests('iris_classifier', 'latest'),
      inferenceServiceManifest('iris_classifier', 'latest'),
    ]);
    for (const object of objects) {
      const { names, labelValues } = namesOf(object);
      for (const name of names) expect(name, `${object.kind} name`).toMatch(DNS_LABEL);
      expect(labelValues.length).toBeGreaterThan(0);
      for (const value of labelValues) expect(value, `${object.kind} label`).toMatch(LABEL_VALUE);
      expect(object.metadata.name).toBe('iris-classifier');
      expect(object.metadata.annotations?.['tiffin/service-name']).toBe('iris_classifier');
    }
  });
});

describe('kubernetesManifests', () => {
  const objects = roundTrip(kubernetesManifests('iris', '3f0c9a61b2d4e857'));
  const [deployment, service, hpa, pdb] = objects as [
    Deployment,
    Service,
    HorizontalPodAutoscaler,
    PodDisruptionBudget,
  ];
  const pod = deployment.spec?.template.spec;
  const container = pod?.containers[0];

  it('writes a Deployment, Service, HorizontalPodAutoscaler and PodDisruptionBudget that the schemas accept', () => {
    expect(objects.map((o) => `${o.apiVersion} ${o.kind}`)).toEqual([
      'apps/v1 Deployment',
      'v1 Service',
      'autoscaling/v2 HorizontalPodAutoscaler',
      'policy/v1 PodDisruptionBudget',
    ]);
    for (const object of objects) validate(object);
  });

  it('probes /livez and /readyz on the named port, with a start-up probe for slow model loads', () => {
    expect(container?.ports).toEqual([{ name: 'http', containerPort: 3000, protocol: 'TCP' }]);
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container?.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
    expect(container?.startupProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    const startup = container?.startupProbe;
    expect((startup?.periodSeconds ?? 0) * (startup?.failureThreshold ?? 0)).toBe(
      DEFAULT_KUBERNETES_OPTIONS.startupSeconds,
    );
  });

  it('runs as the image user (non-root), read-only root, no escalation, no capabilities', () => {
    expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // TIFFIN_HOME is /tmp/tiffin in the image: /tmp is the one writable folder.
    expect(container?.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(pod?.volumes).toEqual([{ name: 'tmp', emptyDir: {} }]);
    expect(pod?.automountServiceAccountToken).toBe(false);
  });

  it('has requests and limits, a Service on port 80 and a selector shared by all four objects', () => {
    expect(container?.image).toBe('iris:3f0c9a61b2d4e857');
    expect(container?.resources).toEqual({
      requests: { cpu: '250m', memory: '256Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
    const selector = { 'app.kubernetes.io/name': 'iris' };
    expect(deployment.spec?.selector.matchLabels).toEqual(selector);
    expect(deployment.spec?.template.metadata?.labels).toMatchObject(selector);
    expect(service.spec?.selector).toEqual(selector);
    expect(service.spec?.ports?.[0]).toMatchObject({ port: 80, targetPort: 'http' });
    expect(pdb.spec?.selector?.matchLabels).toEqual(selector);
    expect(pdb.spec?.maxUnavailable).toBe(1);
    expect(hpa.spec?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'iris' });
    expect(hpa.spec).toMatchObject({ minReplicas: 1, maxReplicas: 5 });
  });

  it('takes image, replicas, autoscaling and resources from the options, and still validates', () => {
    const custom = roundTrip(
      kubernetesManifests('iris', '1', {
        image: 'registry.example/ml/iris:1',
        replicas: 3,
        maxReplicas: 10,
        targetCpuPercent: 60,
        cpuRequest: '2',
        memoryRequest: '4Gi',
        cpuLimit: '4',
        memoryLimit: '8Gi',
        startupSeconds: 600,
      }),
    );
    for (const object of custom) validate(object);
    const [d, , h] = custom as [Deployment, Service, HorizontalPodAutoscaler];
    const c = d.spec?.template.spec?.containers[0];
    expect(d.spec?.replicas).toBe(3);
    expect(c?.image).toBe('registry.example/ml/iris:1');
    expect(c?.resources?.limits).toEqual({ cpu: '4', memory: '8Gi' });
    expect(c?.startupProbe?.failureThreshold).toBe(120);
    expect(h.spec).toMatchObject({ minReplicas: 3, maxReplicas: 10 });
    expect(h.spec?.metrics?.[0]?.resource?.target.averageUtilization).toBe(60);
  });

  it('rejects options Kubernetes would reject, naming the option', () => {
    const bad: [Parameters<typeof kubernetesManifests>[2], RegExp][] = [
      [{ replicas: 0 }, /^replicas must be a whole number of at least 1, got 0$/],
      [{ replicas: 1.5 }, /^replicas must be/],
      [{ replicas: 4, maxReplicas: 2 }, /^maxReplicas \(2\) must be at least replicas \(4\)$/],
      [{ memoryLimit: '8 GB' }, /^memoryLimit '8 GB' is not a Kubernetes quantity/],
      [{ cpuRequest: '-1' }, /^cpuRequest '-1'/],
      [{ cpuRequest: 'ünf' }, /^cpuRequest 'ünf'/],
      [{ image: 'two words' }, /^image 'two words' is not an image reference$/],
    ];
    for (const [options, message] of bad) {
      expect(() => kubernetesManifests('iris', '1', options)).toThrow(InvalidArgument);
      expect(() => kubernetesManifests('iris', '1', options)).toThrow(message);
    }
  });

  it('a manifest the schema rejects is caught (the check is not vacuous)', () => {
    const broken = structuredClone(deployment) as Deployment;
    const first = broken.spec?.template.spec?.containers[0];
    if (first?.ports?.[0]) (first.ports[0] as { containerPort: unknown }).containerPort = '3000';
    expect(() => validate(broken as unknown as KubernetesObject)).toThrow(/containerPort must be integer/);
    const noSelector = structuredClone(pdb) as { spec?: { maxUnavailable?: unknown } };
    if (noSelector.spec) noSelector.spec.maxUnavailable = { percent: 50 };
    expect(() => validate(noSelector as KubernetesObject)).toThrow(/maxUnavailable/);
  });
});

describe('inferenceServiceManifest', () => {
  it('is a KServe v1beta1 InferenceService whose predictor runs the same image as a valid container', () => {
    const [isvc] = roundTrip([inferenceServiceManifest('iris', '1', { replicas: 2 })]);
    expect(isvc).toMatchObject({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService' });
    // Same metadata as the Deployment, whose ObjectMeta the schema checks above.
    expect(isvc?.metadata).toEqual(kubernetesManifests('iris', '1')[0]?.metadata);
    const spec = isvc?.spec as
      | {
          predictor: {
            minReplicas: number;
            maxReplicas: number;
            securityContext: unknown;
            containers: unknown[];
            volumes: unknown[];
          };
        }
      | undefined;
    const predictor = spec?.predictor ?? {
      minReplicas: 0,
      maxReplicas: 0,
      securityContext: {},
      containers: [],
      volumes: [],
    };
    expect(predictor).toMatchObject({ minReplicas: 2, maxReplicas: 5 });
    // KServe's predictor embeds core/v1 PodSpec fields: each is checked with the Kubernetes schema for it.
    new PodSecurityContext(predictor.securityContext as PodSecurityContext).validate();
    for (const volume of predictor.volumes) new Volume(volume as Volume).validate();
    expect(predictor.containers).toHaveLength(1);
    const container = new Container(predictor.containers[0] as Container);
    container.validate();
    expect(container.name).toBe('kserve-container');
    expect(container.image).toBe('iris:1');
    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
  });
});

describe('kubernetesManifests: where tasks live', () => {
  const containerOf = (object: KubernetesObject) =>
    (object as { spec: { template: { spec: { containers: Array<{ env?: unknown[] }> } } } }).spec.template
      .spec.containers[0];

  it('writes a Redis Deployment and Service beside the service with --tasks redis, pointed at by TIFFIN_TASKS_URL', () => {
    const objects = roundTrip(
      kubernetesManifests('word_count', '1.0.0', { tasks: 'redis', taskApis: true, replicas: 3 }),
    );
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Deployment/word-count',
      'Service/word-count',
      'HorizontalPodAutoscaler/word-count',
      'PodDisruptionBudget/word-count',
      'Deployment/word-count-redis',
      'Service/word-count-redis',
    ]);
    for (const object of objects) validate(object);
    expect(containerOf(objects[0] as KubernetesObject)?.env).toContainEqual({
      name: 'TIFFIN_TASKS_URL',
      value: 'redis://word-count-redis:6379/0',
    });
    const redis = objects[4] as KubernetesObject & { spec: { replicas: number; strategy: { type: string } } };
    expect(redis.spec).toMatchObject({ replicas: 1, strategy: { type: 'Recreate' } });
    expect(JSON.stringify(redis)).toContain('noeviction');
    // The Redis Service selects the Redis pods only, not the service's.
    const redisService = objects[5] as KubernetesObject & { spec: { selector: Record<string, string> } };
    expect(redisService.spec.selector).toEqual({ 'app.kubernetes.io/name': 'word-count-redis' });
    expect((objects[2] as KubernetesObject & { spec: { maxReplicas: number } }).spec.maxReplicas).toBe(5);
  });

  it('reads a managed Redis URL from a Secret (secret:NAME[/KEY]), and takes a URL without a password as it is', () => {
    const fromSecret = kubernetesManifests('svc', '1', {
      tasks: 'secret:tasks-redis',
      taskApis: true,
      replicas: 2,
    });
    for (const object of roundTrip(fromSecret)) validate(object);
    expect(containerOf(fromSecret[0] as KubernetesObject)?.env).toContainEqual({
      name: 'TIFFIN_TASKS_URL',
      valueFrom: { secretKeyRef: { name: 'tasks-redis', key: 'url' } },
    });
    const keyed = kubernetesManifests('svc', '1', { tasks: 'secret:shared/tasks_url' });
    expect(containerOf(keyed[0] as KubernetesObject)?.env).toContainEqual({
      name: 'TIFFIN_TASKS_URL',
      valueFrom: { secretKeyRef: { name: 'shared', key: 'tasks_url' } },
    });
    const url = kubernetesManifests('svc', '1', { tasks: 'rediss://redis.example.internal:6380/2' });
    for (const object of roundTrip(url)) validate(object);
    expect(containerOf(url[0] as KubernetesObject)?.env).toContainEqual({
      name: 'TIFFIN_TASKS_URL',
      value: 'rediss://redis.example.internal:6380/2',
    });
    // The default (disk) sets nothing: the server's own default.
    expect(JSON.stringify(kubernetesManifests('svc', '1'))).not.toContain('TIFFIN_TASKS_URL');
  });

  it('keeps a service with task APIs to one replica unless its tasks are on Redis', () => {
    const single = kubernetesManifests('svc', '1', { taskApis: true });
    expect((single[2] as KubernetesObject & { spec: { maxReplicas: number } }).spec.maxReplicas).toBe(1);
    for (const object of single) validate(object);
    for (const options of [{ replicas: 2 }, { maxReplicas: 3 }, { replicas: 2, tasks: 'memory' }])
      expect(() => kubernetesManifests('svc', '1', { taskApis: true, ...options })).toThrow(/Redis/);
    // Without task APIs, replicas are free as before.
    expect(() => kubernetesManifests('svc', '1', { replicas: 2 })).not.toThrow();
  });

  it('refuses a tasks value it cannot place, and a Redis password written into the manifest', () => {
    for (const tasks of ['postgres://db/0', 'secret:', 'secret:Bad_Name', 'redis://', 'disk2'])
      expect(() => kubernetesManifests('svc', '1', { tasks }), tasks).toThrow(InvalidArgument);
    expect(() => kubernetesManifests('svc', '1', { tasks: 'redis://:hunter2@redis:6379/0' })).toThrow(
      /Secret/,
    );
  });
});
