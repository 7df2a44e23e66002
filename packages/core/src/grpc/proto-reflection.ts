import type { PackageDefinition } from '@grpc/proto-loader';

/** proto-loader's reflection of a message: its fields' names and numbers, and its nested enums. */
interface MessageReflection {
  type: {
    field: Array<{ name: string; number: number }>;
    enumType: Array<{ name: string; value: Array<{ name: string; number: number }> }>;
  };
}

function messageOf(protocol: PackageDefinition, message: string): MessageReflection {
  const found = protocol[message] as unknown as MessageReflection | undefined;
  if (!found?.type) throw new Error(`${message} missing from the proto`);
  return found;
}

/** The field number of `message.name`, read from the shipped proto (no wire numbers written by hand). */
export function fieldNumber(protocol: PackageDefinition, message: string, name: string): number {
  const field = messageOf(protocol, message).type.field.find((f) => f.name === name);
  if (!field) throw new Error(`${message}.${name} missing from the proto`);
  return field.number;
}

/** The values of the enum `enumName` nested in `message`, by name. */
export function enumValues(
  protocol: PackageDefinition,
  message: string,
  enumName: string,
): Map<string, number> {
  const found = messageOf(protocol, message).type.enumType.find((e) => e.name === enumName);
  if (!found) throw new Error(`${message}.${enumName} missing from the proto`);
  return new Map(found.value.map((v) => [v.name, v.number]));
}
