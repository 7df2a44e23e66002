import { createHash } from 'node:crypto';

/** Longest DNS-1123/1035 label, and so the longest Service, container and label value. */
export const KUBERNETES_NAME_MAX = 63;

/** The annotation that keeps a service's own name on objects whose name had to change. */
export const SERVICE_NAME_ANNOTATION = 'tiffin/service-name';

/**
 * A name Kubernetes accepts for every object Tiffin writes (RFC 1035 label: lowercase letters, digits and
 * `-`, starting with a letter, ending alphanumeric, at most 63 characters; Services need this strictest form).
 * `iris_classifier` → `iris-classifier`. A name cut to length, or changed beyond case and separators, keeps
 * a short hash of the original so two services never map to one name.
 */
export function kubernetesName(name: string): string {
  let base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  const lossy =
    base === '' || base !== name.toLowerCase().replace(/[_.]/g, '-') || base.length > KUBERNETES_NAME_MAX;
  if (!lossy) return base;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  if (base === '') base = 'tiffin';
  base = base.slice(0, KUBERNETES_NAME_MAX - hash.length - 1).replace(/-+$/, '');
  return `${base}-${hash}`;
}

/** A label value (at most 63 characters of `[A-Za-z0-9._-]`, alphanumeric at both ends), or the name's form. */
export function kubernetesLabelValue(value: string): string {
  return /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)$/.test(value) ? value : kubernetesName(value);
}
