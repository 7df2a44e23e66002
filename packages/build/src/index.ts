// @tiffin/build: package a service (`tiffin build`), containerize it, write its Kubernetes manifests, and the
// package store those packages live in. The CLI composes it with @tiffin/core; serving needs none of it.
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
export {
  type AdoptingStore,
  defaultUnpackedLimit,
  exportEntry,
  type ImportOptions,
  importEntry,
} from './store/archive.js';
export * from './store/package-store.js';
export { resolveServeArgument, resolveServeTarget, type ServeTarget } from './store/serve-target.js';
