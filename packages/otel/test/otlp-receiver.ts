import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** One span as the receiver decoded it, ids in lower-case hex as OTLP/JSON writes them. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  /** The W3C tracestate it carries ('' for none). */
  traceState: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  /** The names of its events. */
  events: string[];
  status: { code: number };
  /** The resource's attributes (service.name…). */
  resource: Record<string, unknown>;
  /** The encoding it came in. */
  encoding: 'json' | 'protobuf';
}

// The part of opentelemetry-proto's trace service request the checks read, with its field numbers.
const SCHEMA = `
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Link { bytes trace_id = 1; bytes span_id = 2; }
message Status { string message = 2; int32 code = 3; }
message Event { string name = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; repeated Event events = 11; repeated Link links = 13; Status status = 15;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
const Request = protobuf.parse(SCHEMA, { keepCase: false }).root.lookupType('ExportTraceServiceRequest');

type Json = Record<string, unknown>;
type Attribute = { key: string; value: Record<string, unknown> };

function attributes(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of (list ?? []) as Attribute[]) {
    // Integers come as strings (protobuf's int64 through `longs: String`, and OTLP/JSON may write them so too).
    out[key] =
      value?.stringValue ??
      value?.boolValue ??
      (value?.intValue !== undefined ? Number(value.intValue) : value?.doubleValue);
  }
  return out;
}

/** OTLP/JSON ids are hex; the protobuf message's are bytes (protobufjs' toObject writes them as base64). */
function hex(id: unknown, encoding: ReceivedSpan['encoding']): string {
  if (typeof id !== 'string' || id === '') return '';
  return encoding === 'json' ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

function spansOf(body: Json, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (body.resourceSpans ?? []) as Json[]) {
    const resource = attributes((rs.resource as Json | undefined)?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Json[]) {
      for (const s of (ss.spans ?? []) as Json[]) {
        out.push({
          traceId: hex(s.traceId, encoding),
          spanId: hex(s.spanId, encoding),
          parentSpanId: hex(s.parentSpanId, encoding),
          traceState: (s.traceState as string | undefined) ?? '',
          name: s.name as string,
          kind: Number(s.kind ?? 0),
          attributes: attributes(s.attributes),
          links: ((s.links ?? []) as Json[]).map((l) => ({
            traceId: hex(l.traceId, encoding),
            spanId: hex(l.spanId, encoding),
          })),
          events: ((s.events ?? []) as Json[]).map((e) => e.name as string),
          status: { code: Number((s.status as Json | undefined)?.code ?? 0) },
          resource,
          encoding,
        });
      }
    }
  }
  return out;
}

/** A real OTLP/HTTP trace receiver on a free port: it decodes JSON and protobuf bodies at `/v1/traces`. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const json = (req.headers['content-type'] ?? '').includes('json');
        const decoded = json
          ? (JSON.parse(body.toString('utf8')) as Json)
          : (Request.toObject(Request.decode(body), {
              bytes: String,
              longs: String,
              defaults: false,
            }) as Json);
        this.spans.push(...spansOf(decoded, json ? 'json' : 'protobuf'));
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : undefined);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
