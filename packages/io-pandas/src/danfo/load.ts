import { MissingDependencyException } from '@tiffin/core/descriptor';

/** The part of danfojs-node this package uses (typed by the package itself). */
export type Danfo = typeof import('danfojs-node');
export type DataFrame = InstanceType<Danfo['DataFrame']>;
export type Series = InstanceType<Danfo['Series']>;

let loading: Promise<Danfo> | undefined;
let loaded: Danfo | undefined;

/**
 * danfojs-node costs about a second to import (it loads tfjs, mathjs and xlsx), so it is imported on
 * first use, never when this package is imported. A failed import names the package to install.
 */
export function loadDanfo(): Promise<Danfo> {
  loading ??= import('danfojs-node').then(
    (mod) => {
      // CommonJS module: the namespace's default export is the module object.
      const dfd = ((mod as { default?: Danfo }).default ?? mod) as Danfo;
      loaded = dfd;
      return dfd;
    },
    (err: unknown) => {
      loading = undefined;
      throw MissingDependencyException.forPackage('danfojs-node', 'PandasDataFrame/PandasSeries', err);
    },
  );
  return loading;
}

/** danfo if it was already imported (by us), for synchronous checks. */
export function loadedDanfo(): Danfo | undefined {
  return loaded;
}
