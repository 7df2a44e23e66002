import { decodeOutput } from './decode.js';
import { encodeInput } from './encode.js';
import { TiffinClientError } from './errors.js';
import type { CallOptions, ClientOptions } from './options.js';
import type { ApiInfo } from './schema.js';
import { send } from './transport.js';
import type { TaskMethods, TaskView } from './types.js';
import type { SseMessage } from './wire.js';

/**
 * The task routes of one API (`<route>/submit`, `/status`, `/get`, `/cancel`, `/events`): the input encoded and the
 * answer decoded by the API's wire forms, as its synchronous call does.
 */
export function taskMethods(
  options: ClientOptions,
  apiOf: (call: CallOptions) => Promise<ApiInfo>,
): TaskMethods {
  const taskApi = async (call: CallOptions): Promise<ApiInfo> => {
    const api = await apiOf(call);
    if (!api.task)
      throw new TiffinClientError(`API '${api.name}' is not served as a task (task: true)`, 'usage');
    return api;
  };
  const byId = async (
    call: CallOptions,
    method: 'GET' | 'POST',
    operation: string,
    id: string,
  ): Promise<{ api: ApiInfo; response: Response; done: () => void }> => {
    const api = await taskApi(call);
    const path = `${api.route}/${operation}?id=${encodeURIComponent(id)}`;
    const { response, done } = await send(
      options,
      { method, path, what: `${api.name} task (${method} ${api.route}/${operation})` },
      call,
    );
    return { api, response, done };
  };
  const view = async (answer: { response: Response; done: () => void }): Promise<TaskView> => {
    try {
      return (await answer.response.json()) as TaskView;
    } finally {
      answer.done();
    }
  };
  return {
    async submit(input, call = {}) {
      const api = await taskApi(call);
      const { body, contentType } = await encodeInput(input, api.input);
      const answer = await send(
        options,
        {
          method: 'POST',
          path: `${api.route}/submit`,
          body,
          headers: contentType ? { 'content-type': contentType } : {},
          what: `${api.name} task (POST ${api.route}/submit)`,
        },
        call,
      );
      try {
        return ((await answer.response.json()) as { id: string }).id;
      } finally {
        answer.done();
      }
    },
    status: async (id, call = {}) => view(await byId(call, 'GET', 'status', id)),
    cancel: async (id, call = {}) => view(await byId(call, 'POST', 'cancel', id)),
    async get(id, call = {}) {
      const { api, response, done } = await byId(call, 'GET', 'get', id);
      return decodeOutput(response, api.output, done);
    },
    async events(id, call = {}) {
      const { response, done } = await byId(call, 'GET', 'events', id);
      return (await decodeOutput(response, null, done)) as AsyncIterable<SseMessage>;
    },
  };
}
