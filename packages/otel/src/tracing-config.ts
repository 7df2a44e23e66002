/**
 * When and how Tiffin traces, read from the standard OpenTelemetry variables (the OTel specification's
 * "Environment Variable Specification", docs/observability.md): the SDK stays unloaded unless tracing is asked
 * for, so a server that does not trace loads no SDK.
 */
export interface TracingConfig {
  /** The span exporters to run (`OTEL_TRACES_EXPORTER`, a comma-separated list; `none` alone is none). */
  exporters: ReadonlyArray<'otlp' | 'console'>;
  /** The OTLP exporter's encoding (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`). */
  protocol: 'http/protobuf' | 'http/json';
}

export type Env = Readonly<Record<string, string | undefined>>;

const EXPORTERS = new Set(['otlp', 'console', 'none']);
const PROTOCOLS = new Set(['http/protobuf', 'http/json']);

/** A variable's value, trimmed; empty counts as unset, as the specification says. */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * Whether the environment asks for traces: `OTEL_SDK_DISABLED` not `true`, and an exporter named
 * (`OTEL_TRACES_EXPORTER` other than `none`), an OTLP endpoint set (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), or `OTEL_SDK_DISABLED=false` said outright (the defaults then: OTLP
 * over HTTP/protobuf to localhost:4318).
 */
export function tracingRequested(env: Env): boolean {
  const disabled = read(env, 'OTEL_SDK_DISABLED')?.toLowerCase();
  if (disabled === 'true') return false;
  const exporter = read(env, 'OTEL_TRACES_EXPORTER');
  if (exporter !== undefined) return exporter.toLowerCase() !== 'none';
  return (
    disabled === 'false' ||
    read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined ||
    read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined
  );
}

/** The exporters and protocol the environment names; a value the specification does not define is an error. */
export function tracingConfig(env: Env): TracingConfig {
  const names = (read(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp')
    .toLowerCase()
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!EXPORTERS.has(name))
      throw new Error(`OTEL_TRACES_EXPORTER=${name} is not supported: use otlp, console or none`);
  }
  const protocol = (
    read(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    read(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf'
  ).toLowerCase();
  if (!PROTOCOLS.has(protocol))
    throw new Error(`OTLP protocol ${protocol} is not supported: use http/protobuf or http/json`);
  const exporters = names.filter((name): name is 'otlp' | 'console' => name !== 'none');
  return { exporters: [...new Set(exporters)], protocol: protocol as TracingConfig['protocol'] };
}
