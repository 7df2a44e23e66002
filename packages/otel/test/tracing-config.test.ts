import { describe, expect, it } from 'vitest';
import { tracingConfig, tracingRequested } from '../src/index.js';

describe('the OTEL_* variables, as the OpenTelemetry specification reads them', () => {
  it('ask for traces with an exporter, an endpoint or OTEL_SDK_DISABLED=false; OTEL_SDK_DISABLED=true wins', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(
      true,
    );
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
    // An empty value counts as unset.
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: ' ', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
  });

  it('name the exporters and the OTLP protocol, the traces-specific variable first', () => {
    expect(tracingConfig({})).toEqual({ exporters: ['otlp'], protocol: 'http/protobuf' });
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp, console,otlp' }).exporters).toEqual([
      'otlp',
      'console',
    ]);
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: 'none' }).exporters).toEqual([]);
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol).toBe('http/json');
    expect(
      tracingConfig({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }).protocol,
    ).toBe('http/protobuf');
  });

  it('refuse what they cannot do, naming what they can', () => {
    expect(() => tracingConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/otlp, console or none/);
    expect(() => tracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /http\/protobuf or http\/json/,
    );
  });
});
