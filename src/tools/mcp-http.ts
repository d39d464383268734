import { SdkHttpError, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { HatcheryError } from '../core/errors.js';
import { envRefs } from '../core/process/child-env.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { envHeaders } from './env-headers.js';

// MCP servers reached by URL: the headers they are sent, and what to say when they refuse them.

/** A server entry with a `url`. */
type UrlServerDef = Extract<McpServerDef, { url: string }>;

/** The HTTP status of a refusal of the credentials (401, 403) somewhere in an error's causes. */
function refusalStatus(err: unknown): number | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as Error).cause, depth++) {
    if (e instanceof SdkHttpError && (e.status === 401 || e.status === 403)) return e.status;
  }
  return undefined;
}

/**
 * What to check when a url server refuses the credentials: the headers the entry sends and the
 * variables they come from, by name only (never a value: the token must not reach any output).
 */
function credentialsHint(def: UrlServerDef): string {
  const headers = Object.entries(def.headers ?? {});
  if (headers.length === 0) {
    return `the entry sends no headers: add them, e.g. "headers": {"Authorization": "Bearer \${TOKEN}"} with TOKEN set in the environment`;
  }
  const each = headers.map(([header, value]) => {
    const vars = envRefs(value);
    return vars.length > 0
      ? `the "${header}" header (its value comes from ${vars.map((v) => `\${${v}}`).join(', ')}: is that the right, unexpired token for this server?)`
      : `the "${header}" header (written literally in the server entry)`;
  });
  return `check ${each.join(' and ')}`;
}

/** The Streamable HTTP transport to a url server, its headers taken from the environment. */
export function httpTransport(server: string, def: UrlServerDef): Transport {
  return new StreamableHTTPClientTransport(new URL(def.url), {
    requestInit: def.headers
      ? {
          headers: envHeaders(`MCP server "${server}"`, def.headers, 'the "headers" of the server entry', {
            server,
          }),
        }
      : undefined,
  });
}

/** The error of a url server that refused the credentials (HTTP 401/403), or undefined for any other failure. */
export function refusedError(server: string, def: UrlServerDef, err: unknown): HatcheryError | undefined {
  const status = refusalStatus(err);
  if (status === undefined) return undefined;
  return new HatcheryError(
    'TOOL',
    `MCP server "${server}": the server refused the credentials (HTTP ${status}) at ${def.url}; ${credentialsHint(def)}`,
    { server, status },
    { cause: err },
  );
}
