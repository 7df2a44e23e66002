import { DEFAULT_KUBERNETES_OPTIONS, type KubernetesOptions } from '@tiffin/build';
import type { Command } from 'commander';
import { parseNonNegativeInt, parsePositiveInt } from './options.js';

/** The manifest options `tiffin build`, `tiffin diffusion build` and `tiffin kubernetes` share. */
export interface KubernetesFlags {
  image?: string;
  replicas?: number;
  maxReplicas?: number;
  minReplicas?: number;
  autoscale?: string;
  prometheus?: string;
  cpu?: string;
  memory?: string;
  cpuLimit?: string;
  memoryLimit?: string;
  kserve?: boolean;
  tasks?: string;
}

/** Add the Kubernetes manifest options to a command; `defaults` overrides the shown defaults. */
export function kubernetesOptions(command: Command, defaults: KubernetesOptions = {}): Command {
  const d = { ...DEFAULT_KUBERNETES_OPTIONS, ...defaults };
  return command
    .option('--image <image>', 'image the Kubernetes Deployment runs (default: <name>:<version>)')
    .option(
      '--replicas <n>',
      `replicas, and the autoscaler's minimum (default ${d.replicas})`,
      parsePositiveInt,
    )
    .option('--max-replicas <n>', `the autoscaler's maximum (default ${d.maxReplicas})`, parsePositiveInt)
    .option(
      '--min-replicas <n>',
      "the autoscaler's minimum when not --replicas; 0 scales to zero (--autoscale keda with --tasks on Redis)",
      parseNonNegativeInt,
    )
    .option(
      '--autoscale <kind>',
      `cpu (a HorizontalPodAutoscaler) or keda (a KEDA ScaledObject on the task queue and the calls in flight) (default ${d.autoscale})`,
    )
    .option(
      '--prometheus <url>',
      `the Prometheus KEDA reads the service's metrics from (default ${d.prometheusServer})`,
    )
    .option('--cpu <quantity>', `CPU request per replica (default ${d.cpuRequest})`)
    .option('--memory <quantity>', `memory request per replica (default ${d.memoryRequest})`)
    .option('--cpu-limit <quantity>', `CPU limit per replica (default ${d.cpuLimit})`)
    .option('--memory-limit <quantity>', `memory limit per replica (default ${d.memoryLimit})`)
    .option('--kserve', 'also write a KServe InferenceService (inferenceservice.yaml)')
    .option(
      '--tasks <store>',
      "where task APIs' tasks live in the pods: disk (default), memory, redis (a Redis beside the service), secret:NAME[/KEY] (a Redis URL in a Secret) or redis://host:port/db; more than one replica needs Redis",
    );
}

/** The core options for the given flags, over `defaults`. */
export function kubernetesOptionsFrom(
  flags: KubernetesFlags,
  defaults: KubernetesOptions = {},
): KubernetesOptions {
  const given: KubernetesOptions = {
    image: flags.image,
    replicas: flags.replicas,
    maxReplicas: flags.maxReplicas,
    minReplicas: flags.minReplicas,
    autoscale: flags.autoscale as KubernetesOptions['autoscale'],
    prometheusServer: flags.prometheus,
    cpuRequest: flags.cpu,
    memoryRequest: flags.memory,
    cpuLimit: flags.cpuLimit,
    memoryLimit: flags.memoryLimit,
    tasks: flags.tasks,
  };
  return {
    ...defaults,
    ...Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)),
  };
}
