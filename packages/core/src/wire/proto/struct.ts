import type { StructMessage, ValueMessage } from './messages.js';

/** Plain JSON-compatible value → google.protobuf.Value (proto-loader shape). */
export function toValueMessage(value: unknown): ValueMessage {
  if (value === null || value === undefined) return { nullValue: 'NULL_VALUE', kind: 'nullValue' };
  if (typeof value === 'number') return { numberValue: value, kind: 'numberValue' };
  if (typeof value === 'bigint') return { numberValue: Number(value), kind: 'numberValue' };
  if (typeof value === 'string') return { stringValue: value, kind: 'stringValue' };
  if (typeof value === 'boolean') return { boolValue: value, kind: 'boolValue' };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValueMessage) }, kind: 'listValue' };
  return { structValue: toStructMessage(value as Record<string, unknown>), kind: 'structValue' };
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
    (['nullValue', 'numberValue', 'stringValue', 'boolValue', 'structValue', 'listValue'] as const).find(
      (k) => message[k] !== undefined,
    );
  switch (kind) {
    case 'numberValue':
      return message.numberValue ?? 0;
    case 'stringValue':
      return message.stringValue ?? '';
    case 'boolValue':
      return message.boolValue ?? false;
    case 'structValue':
      return fromStructMessage(message.structValue);
    case 'listValue':
      return (message.listValue?.values ?? []).map(fromValueMessage);
    default:
      return null;
  }
}

export function fromStructMessage(message: StructMessage | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(message?.fields ?? {})) out[k] = fromValueMessage(v);
  return out;
}
