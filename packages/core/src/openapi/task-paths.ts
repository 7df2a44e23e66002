import type { InferenceApi, Service } from '../service/service.js';

const ID_PARAMETER = {
  name: 'id',
  in: 'query',
  required: true,
  description: 'The task id `/submit` answered.',
  schema: { type: 'string', maxLength: 128 },
};

const TASK_VIEW_SCHEMA = {
  type: 'object',
  required: [
    'id',
    'api',
    'status',
    'step',
    'total_steps',
    'error',
    'created_at',
    'finished_at',
    'expires_at',
  ],
  properties: {
    id: { type: 'string' },
    api: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] },
    step: { type: 'integer' },
    total_steps: { type: 'integer', nullable: true },
    error: { nullable: true, allOf: [{ $ref: '#/components/schemas/InternalServerError' }] },
    created_at: { type: 'string', format: 'date-time' },
    finished_at: { type: 'string', format: 'date-time', nullable: true },
    expires_at: { type: 'string', format: 'date-time', nullable: true },
    queue_position: {
      type: 'integer',
      minimum: 1,
      description: "A queued task's place, from 1 (the next to start); absent once it runs",
    },
    eta_seconds: {
      type: 'number',
      nullable: true,
      description: 'Rough seconds until an unfinished task ends; null with nothing to estimate from',
    },
  },
};

const WEBHOOK_PARAMETER = {
  name: 'Tiffin-Webhook-Url',
  in: 'header',
  required: false,
  description:
    'A URL told when the task ends (a signed POST, Standard Webhooks); its host must be one the server allows, else 400 WEBHOOK_URL_REFUSED',
  schema: { type: 'string', format: 'uri', maxLength: 2048 },
};

const jsonAnswer = (description: string, schema: unknown) => ({
  description,
  content: { 'application/json': { schema } },
});

const errorAnswer = (description: string, schema: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
});

/**
 * The task routes of a task API in `/docs.json` (`/<route>/submit`, `status`, `get`, `cancel`, `events`),
 * made from the synchronous operation: submit takes its body, get answers its 200.
 */
export function taskPaths(
  service: Service,
  api: InferenceApi,
  operation: Record<string, unknown>,
): Record<string, Record<string, unknown>> {
  const responses = operation.responses as Record<string, unknown>;
  // `x-tiffin-name` stays on the synchronous operation only (clients map it to the API's route); these say
  // which API and operation they serve.
  const common = (op: string) => ({
    tags: operation.tags,
    'x-tiffin-task': { api: api.name, operation: op },
  });
  const byId = (op: string, summary: string, ok: unknown, extra: Record<string, unknown> = {}) => ({
    ...common(op),
    summary,
    operationId: `${service.name}__${api.name}__${op}`,
    parameters: [ID_PARAMETER],
    responses: {
      '200': ok,
      '400': errorAnswer('No task id, or a malformed one', 'InvalidArgument'),
      '404': errorAnswer('No such task (unknown, or its result expired): code JOB_NOT_FOUND', 'NotFound'),
      ...extra,
    },
  });
  const { 'x-tiffin-name': _name, ...synchronous } = operation;
  const submitOperation = {
    ...synchronous,
    ...common('submit'),
    operationId: `${service.name}__${api.name}__submit`,
    summary: `Submit ${api.name} as a task: answers 202 {id} at once`,
    parameters: [...((synchronous.parameters as unknown[] | undefined) ?? []), WEBHOOK_PARAMETER],
    responses: {
      ...responses,
      '202': jsonAnswer('The task is queued', {
        type: 'object',
        required: ['id'],
        properties: { id: { type: 'string' } },
      }),
      '503': errorAnswer(
        'The task store is full (code JOBS_FULL), or the server is busy',
        'ServiceUnavailable',
      ),
    },
  };
  delete (submitOperation.responses as Record<string, unknown>)['200'];
  return {
    [`${api.route}/submit`]: Object.fromEntries(
      api.input.httpMethods.map((m) => [m.toLowerCase(), submitOperation]),
    ),
    [`${api.route}/status`]: {
      get: byId('status', `Where the ${api.name} task stands`, jsonAnswer('The task', TASK_VIEW_SCHEMA)),
    },
    [`${api.route}/get`]: {
      get: byId(
        'get',
        `The answer of a succeeded ${api.name} task, as /${api.name} gives it`,
        responses['200'],
        {
          '409': errorAnswer('The task has not succeeded (code JOB_NOT_DONE)', 'InvalidArgument'),
        },
      ),
    },
    [`${api.route}/cancel`]: {
      post: byId(
        'cancel',
        `Cancel a queued or running ${api.name} task`,
        jsonAnswer('The task', TASK_VIEW_SCHEMA),
      ),
    },
    [`${api.route}/events`]: {
      get: byId(
        'events',
        `Server-sent events of the ${api.name} task: queued, started, step (k of n), then done, failed or cancelled`,
        { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      ),
    },
  };
}
