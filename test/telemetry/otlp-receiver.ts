/**
 * A loopback OTLP/HTTP receiver for tests: it takes the JSON export of traces (POST /v1/traces) as a
 * collector would, keeps the raw bodies (to search them for secrets) and the spans, flattened with
 * their attributes as plain values. `mode: 'hang'` never answers, like a collector that is stuck.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span, as a test reads it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  startNs: bigint;
  endNs: bigint;
  resource: Record<string, unknown>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

function plain(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

/** A running receiver: what arrived so far. */
export class OtlpReceiver {
  readonly bodies: string[] = [];
  readonly spans: ReceivedSpan[] = [];
  readonly requests: { path: string; headers: IncomingMessage['headers'] }[] = [];
  private server: Server | undefined;
  private readonly open = new Set<ServerResponse>();
  url = '';

  constructor(private readonly mode: 'ok' | 'hang' = 'ok') {}

  /** Listens on 127.0.0.1 (ephemeral port). */
  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.requests.push({ path: req.url ?? '', headers: req.headers });
        this.bodies.push(body);
        this.collect(body);
        if (this.mode === 'hang') {
          this.open.add(res);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  private collect(body: string): void {
    let json: {
      resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: unknown[] }[] }[];
    };
    try {
      json = JSON.parse(body);
    } catch {
      return;
    }
    for (const rs of json.resourceSpans ?? []) {
      const resource = attrs(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const raw of ss.spans ?? []) {
          const s = raw as Record<string, unknown> & {
            attributes?: KeyValue[];
            events?: { name: string; attributes?: KeyValue[] }[];
          };
          this.spans.push({
            traceId: s.traceId as string,
            spanId: s.spanId as string,
            parentSpanId: (s.parentSpanId as string | undefined) || undefined,
            name: s.name as string,
            kind: s.kind as number,
            attributes: attrs(s.attributes),
            status: (s.status as { code: number; message?: string } | undefined) ?? { code: 0 },
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
            startNs: BigInt(s.startTimeUnixNano as string),
            endNs: BigInt(s.endTimeUnixNano as string),
            resource,
          });
        }
      }
    }
  }

  /** The one span named `name` (fails when there is none or several). */
  one(name: string): ReceivedSpan {
    const found = this.spans.filter((s) => s.name === name);
    if (found.length !== 1) {
      throw new Error(
        `expected one span "${name}", got ${found.length}: ${this.spans.map((s) => s.name).join(', ')}`,
      );
    }
    return found[0]!;
  }

  /** The span whose id is `id`. */
  byId(id: string | undefined): ReceivedSpan | undefined {
    return this.spans.find((s) => s.spanId === id);
  }

  /** Stops listening and drops every connection (a hanging one too). */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.open) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
