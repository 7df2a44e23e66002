import type { StructMessage, ValueMessage } from './messages.js';

/** Plain JSON-compatible value → google.protobuf.Value (proto-loader shape). */
export function toValueMessage(value: unknown): ValueMessage {
  if (value === null || value === undefined) return { null_value: 'NULL_VALUE', kind: 'null_value' };
  if (typeof value === 'number') return { number_value: value, kind: 'number_value' };
  if (typeof value === 'bigint') return { number_value: Number(value), kind: 'number_value' };
  if (typeof value === 'string') return { string_value: value, kind: 'string_value' };
  if (typeof value === 'boolean') return { bool_value: value, kind: 'bool_value' };
  if (Array.isArray(value)) return { list_value: { values: value.map(toValueMessage) }, kind: 'list_value' };
  return { struct_value: toStructMessage(value as Record<string, unknown>), kind: 'struct_value' };
}

export function toStructMessage(obj: Record<string, unknown>): StructMessage {
  const fields: Record<string, ValueMessage> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = toValueMessage(v);
  return { fields };
}

/** google.protobuf.Value → plain value (struct → object, list → array, numbers are doubles). */
export function fromValueMessage(message: ValueMessage | undefined): unknown {
  if (!message) return null;
  const kind =
    message.kind ??
    (['null_value', 'number_value', 'string_value', 'bool_value', 'struct_value', 'list_value'] as const).find(
      (k) => message[k] !== undefined,
    );
  switch (kind) {
    case 'number_value':
      return message.number_value ?? 0;
    case 'string_value':
      return message.string_value ?? '';
    case 'bool_value':
      return message.bool_value ?? false;
    case 'struct_value':
      return fromStructMessage(message.struct_value);
    case 'list_value':
      return (message.list_value?.values ?? []).map(fromValueMessage);
    default:
      return null;
  }
}

export function fromStructMessage(message: StructMessage | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(message?.fields ?? {})) out[k] = fromValueMessage(v);
  return out;
}
