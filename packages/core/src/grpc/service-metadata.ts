import type { IODescriptor } from '../io/descriptor.js';
import type { Service } from '../service/service.js';
import { toStructMessage } from '../wire/proto/struct.js';

interface DescriptorMetadata {
  descriptor_id?: string;
  attributes: ReturnType<typeof toStructMessage>;
}

/** `ServiceMetadataResponse` for a service (docs/spec/io-descriptors.md §11.2 rule 5). */
export function serviceMetadata(svc: Service) {
  return {
    name: svc.name,
    docs: svc.doc,
    apis: [...svc.apis.values()].map((api) => ({
      name: api.name,
      docs: api.doc,
      input: descriptorMetadata(api.input),
      output: descriptorMetadata(api.output),
    })),
  };
}

function descriptorMetadata(descriptor: IODescriptor): DescriptorMetadata {
  const spec = descriptor.toSpec();
  const { id, ...rest } = spec ?? { id: null };
  // The spec minus its id, e.g. `{args: {...}}` (Text: empty).
  const meta: DescriptorMetadata = { attributes: toStructMessage(rest as Record<string, unknown>) };
  if (id) meta.descriptor_id = id;
  return meta;
}
