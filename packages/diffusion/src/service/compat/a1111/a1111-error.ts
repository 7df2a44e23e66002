import type { Service } from '@tiffin/core';

/** A route group's error mapper, as `Service.group` takes it (docs/server.md, route groups). */
type ErrorMapper = NonNullable<Parameters<Service['group']>[0]['errors']>;

/**
 * The A1111 group's error shape: the catalog's answer as A1111's API (FastAPI) writes an error,
 * `{error, detail, body, errors}`, with the stable code as `error` and the message as `detail`. A request it
 * cannot take (the catalog's 400s) is a 422, as FastAPI answers one it cannot validate; no internal detail for a
 * 5xx.
 */
export const a1111Errors: ErrorMapper = ({ status, body }) => ({
  status: status === 400 ? 422 : status,
  body: {
    error: body.code,
    detail: status >= 500 && status !== 503 ? 'The server failed to generate the image' : body.error,
    body: '',
    errors: '',
  },
});
