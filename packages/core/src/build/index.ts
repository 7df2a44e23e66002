export * from './build-package.js';
export { packageNameOf } from './bundle.js';
export * from './container-tools.js';
export * from './containerize.js';
export {
  DEFAULT_KUBERNETES_OPTIONS,
  inferenceServiceManifest,
  type KubernetesObject,
  type KubernetesOptions,
  kubernetesManifests,
  kubernetesYaml,
  type ResolvedKubernetesOptions,
  resolveKubernetesOptions,
} from './kubernetes.js';
export { kubernetesName, SERVICE_NAME_ANNOTATION } from './kubernetes-names.js';
export {
  CONTAINER_PORT,
  CONTAINER_UID,
  CONTAINER_USER,
  DEFAULT_BASE_IMAGE,
  npmVersion,
} from './runtime-files.js';
export * from './service-reference.js';
