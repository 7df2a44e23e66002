import type { IODescriptor } from '../io/descriptor.js';
import { type ExampleFiles, exampleFilePath } from '../io/example-file.js';
import type { ComponentsObject, RequestBodyObject, ResponseObject, SchemaObject } from '../io/openapi.js';
import type { InferenceApi, Service } from '../service/service.js';
import { mountedRouterRoutes } from './mounted-routes.js';
import { taskPaths } from './task-paths.js';

/** The OpenAPI 3.0 document `/docs.json` serves (docs/spec/io-descriptors.md §10.7 with D4, D6, D13). */
export interface OpenApiDocument {
  openapi: '3.0.2';
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, SchemaObject> };
}

export const SERVICE_APIS_TAG = 'Service APIs';
export const INFRASTRUCTURE_TAG = 'Infrastructure';
export const MOUNTED_TAG = 'Mounted routes';

/** Error responses every API may give, each with the docs/spec/io-descriptors.md D4 body schema. */
const API_ERRORS: ReadonlyArray<{ status: string; schema: string; description: string }> = [
  { status: '400', schema: 'InvalidArgument', description: 'Bad Request' },
  { status: '404', schema: 'NotFound', description: 'Not Found' },
  { status: '413', schema: 'PayloadTooLarge', description: 'Payload Too Large' },
  { status: '500', schema: 'InternalServerError', description: 'Internal Server Error' },
  { status: '503', schema: 'ServiceUnavailable', description: 'Service Unavailable' },
  { status: '504', schema: 'GatewayTimeout', description: 'Gateway Timeout' },
];

const INFRA_PATHS: ReadonlyArray<[string, string]> = [
  ['/healthz', 'Health check endpoint (alias of /livez).'],
  ['/livez', 'Liveness probe: answers while the process runs.'],
  ['/readyz', 'Readiness probe: 200 once startup finished, 503 while starting or shutting down.'],
  ['/metrics', 'Prometheus metrics of the API server.'],
];

/** The JSON schema of the one error body (docs/spec/io-descriptors.md D4). */
export function errorBodySchema(title: string, description: string): SchemaObject {
  return {
    type: 'object',
    title,
    description,
    required: ['error', 'type', 'code'],
    properties: {
      error: { type: 'string', title: 'Message' },
      type: { type: 'string', title: 'Error Type' },
      code: {
        type: 'string',
        title: 'Error Code',
        description: 'Stable machine-readable code, e.g. BAD_INPUT.',
      },
      detail: { title: 'Error Detail' },
    },
  };
}

/** A descriptor without OpenAPI hooks still gets a generic (but valid) entry rather than breaking the page. */
function safely<T>(build: () => T, fallback: () => T): T {
  try {
    return build();
  } catch {
    return fallback();
  }
}

function genericContent(descriptor: IODescriptor) {
  return { [descriptor.mimeType ?? '*/*']: { schema: {} } };
}

/** The API's own example, when it gives one, in the first (default) media type of the request body. */
function withExample(body: RequestBodyObject, example: unknown): RequestBodyObject {
  if (example === undefined) return body;
  const [first, ...rest] = Object.entries(body.content);
  if (!first) return body;
  return { ...body, content: Object.fromEntries([[first[0], { ...first[1], example }], ...rest]) };
}

/**
 * Links to the input's example files (served by the server): the body's as the OpenAPI example's
 * `externalValue` in its media type; multipart parts' in `x-tiffin-example-files` ({part: link}) beside
 * the form's JSON example. The API page pre-fills them; a client can post them as they are.
 */
function withExampleFiles(body: RequestBodyObject, api: InferenceApi): RequestBodyObject {
  const files = safely<ExampleFiles>(
    () => api.input.exampleFiles(api.example),
    () => ({}),
  );
  const entries = Object.entries(files);
  if (entries.length === 0) return body;
  let content = { ...body.content };
  const whole = files[''];
  if (whole) {
    const media = content[whole.mediaType] ?? { schema: { type: 'string', format: 'binary' } };
    const link = exampleFilePath(api.name, '');
    // First, so that the page selects the media type the example is in. Where the example is also a JSON value
    // (a CSV's text) it stays inline, the file linked beside it: OpenAPI allows `example` or `examples`, not
    // both, and generators (openapi-typescript) resolve an `externalValue` as a file to read.
    const { [whole.mediaType]: _, ...others } = content;
    content = {
      [whole.mediaType]:
        media.example !== undefined
          ? { ...media, 'x-tiffin-example-files': { '': link } }
          : { ...media, examples: { example: { summary: whole.fileName, externalValue: link } } },
      ...others,
    };
  } else if (content['multipart/form-data']) {
    content['multipart/form-data'] = {
      ...content['multipart/form-data'],
      'x-tiffin-example-files': Object.fromEntries(
        entries.map(([part]) => [part, exampleFilePath(api.name, part)]),
      ),
    };
  }
  return { ...body, content };
}

/**
 * A form's example, field by field, also in its schema's properties: Swagger UI fills form fields from the
 * properties' examples, not from the media type's.
 */
function withFormFieldExamples(body: RequestBodyObject): RequestBodyObject {
  const form = body.content['multipart/form-data'];
  const example = form?.example;
  const properties = form?.schema.properties as Record<string, SchemaObject> | undefined;
  if (!form || !properties || typeof example !== 'object' || example === null) return body;
  const withExamples: Record<string, SchemaObject> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = (example as Record<string, unknown>)[name];
    // A reference takes no siblings in OpenAPI 3.0: such a field keeps the form's example only.
    const keep = value === undefined || 'example' in schema || '$ref' in schema;
    withExamples[name] = keep ? schema : { ...schema, example: value };
  }
  return {
    ...body,
    content: {
      ...body.content,
      'multipart/form-data': { ...form, schema: { ...form.schema, properties: withExamples } },
    },
  };
}

function apiOperation(service: Service, api: InferenceApi): Record<string, unknown> {
  const ok = safely<ResponseObject>(
    () => api.output.openapiResponses(),
    () => ({
      description: 'Successful Response',
      content: genericContent(api.output),
      'x-tiffin-io-descriptor': api.output.toSpec(),
    }),
  );
  const responses: Record<string, unknown> = { '200': ok };
  for (const e of API_ERRORS) {
    responses[e.status] = {
      description: e.description,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${e.schema}` } } },
    };
  }
  const requestBody = withExample(
    safely<RequestBodyObject>(
      () => api.input.openapiRequestBody(),
      () => ({
        content: genericContent(api.input),
        required: true,
        'x-tiffin-io-descriptor': api.input.toSpec(),
      }),
    ),
    api.example,
  );
  // The client's form of each side (`x-tiffin-wire`): a fetch-only client encodes and decodes by it.
  responses['200'] = { ...ok, 'x-tiffin-wire': api.output.clientWire() };
  const requestBodyWithFiles = withFormFieldExamples(withExampleFiles(requestBody, api));
  return {
    responses,
    tags: [SERVICE_APIS_TAG],
    // Media types live in requestBody/responses content (OpenAPI 3); Swagger 2's consumes/produces are
    // not allowed there, so validators reject them.
    'x-tiffin-name': api.name,
    summary: `InferenceAPI(${api.input.displayName} → ${api.output.displayName})`,
    description: api.doc,
    requestBody: { ...requestBodyWithFiles, 'x-tiffin-wire': api.input.clientWire() },
    operationId: `${service.name}__${api.name}`,
    // Batchable APIs say so: clients learn the row limit per request and the latency budget.
    ...(api.batching ? { 'x-tiffin-batching': { batchable: true, ...api.batching } } : {}),
  };
}

export function buildOpenApiDocument(service: Service): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, description] of INFRA_PATHS) {
    paths[path] = {
      get: {
        responses: { '200': { description: 'Successful Response' } },
        tags: [INFRASTRUCTURE_TAG],
        description,
      },
    };
  }
  const schemas: Record<string, SchemaObject> = {};
  const addComponents = (c: ComponentsObject | null) => Object.assign(schemas, c?.schemas ?? {});
  for (const api of service.apis.values()) {
    const operation = apiOperation(service, api);
    const { requestBody, ...withoutBody } = operation;
    // A GET operation has no body: its input comes from the query string (see the API's description).
    paths[api.route] = Object.fromEntries(
      api.input.httpMethods.map((m) => [m.toLowerCase(), m === 'GET' ? withoutBody : operation]),
    );
    if (api.task) Object.assign(paths, taskPaths(service, api, operation));
    addComponents(
      safely(
        () => api.input.openapiComponents(),
        () => null,
      ),
    );
    addComponents(
      safely(
        () => api.output.openapiComponents(),
        () => null,
      ),
    );
  }
  const mounted = mountedRouterRoutes(service.mounts);
  for (const route of mounted) {
    paths[route.path] ??= {};
    const operations = paths[route.path]!;
    for (const method of route.methods) {
      // An API or built-in route on the same path and method is described by its own entry.
      operations[method] ??= {
        tags: [MOUNTED_TAG],
        summary: `${method.toUpperCase()} ${route.path}`,
        description: route.public
          ? 'A route mounted on the service (public: no API token needed).'
          : 'A route mounted on the service.',
        ...(route.params.length > 0
          ? {
              parameters: route.params.map((name) => ({
                name,
                in: 'path',
                required: true,
                schema: { type: 'string' },
              })),
            }
          : {}),
        responses: { '200': { description: 'Answered by the mounted route' } },
      };
    }
  }
  for (const e of API_ERRORS) schemas[e.schema] = errorBodySchema(e.schema, e.description);
  return {
    openapi: '3.0.2',
    info: { title: service.name, version: service.version ?? '0.0.0', description: service.doc },
    servers: [{ url: '.' }],
    tags: [
      { name: SERVICE_APIS_TAG, description: 'Inference endpoints of this service.' },
      { name: INFRASTRUCTURE_TAG, description: 'Common infrastructure endpoints for observability.' },
      ...(mounted.length > 0
        ? [{ name: MOUNTED_TAG, description: 'Routes of the middleware mounted with `svc.mount()`.' }]
        : []),
    ],
    paths,
    components: { schemas },
  };
}
