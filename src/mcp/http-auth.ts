import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How to pass the token, in every answer to a request without it. MCP clients with OAuth support
 * (the SDK's, hence mcp-remote and the Inspector) react to a 401 with OAuth discovery and dynamic
 * client registration whatever the header says, and show the registration's answer body: so this
 * text is also that body, and it avoids the words "Unauthorized" and "Not Found", on which
 * mcp-remote starts a browser login or a transport fallback instead of showing it.
 */
const HOW_TO =
  'hatchery-mcp takes a static bearer token, not OAuth: send the header "Authorization: Bearer <token>" ' +
  'with the token the server was started with (serve --token, or HATCHERY_MCP_TOKEN). ' +
  'mcp-remote: --header "Authorization: Bearer <token>"; Claude Code: claude mcp add --transport http ' +
  '<name> <url> --header "Authorization: Bearer <token>"; VS Code, Cursor: "headers" in mcp.json';

/** Paths of OAuth discovery and of the default OAuth endpoints an SDK client tries without metadata. */
const OAUTH_PATH =
  /^\/(?:\.well-known\/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/.*)?|register|authorize|token)\/?$/;

/** True for a request path that belongs to OAuth discovery or the OAuth endpoints. */
export function isOAuthPath(pathname: string): boolean {
  return OAUTH_PATH.test(pathname);
}

/** Why a request lacks the server's token: none sent, or a wrong one. */
export type TokenProblem = 'missing' | 'invalid';

/** Whether a request that failed the token check sent a bearer token at all. */
export function tokenProblem(req: IncomingMessage): TokenProblem {
  const auth = req.headers.authorization;
  return typeof auth === 'string' && /^Bearer\s+\S/i.test(auth.trim()) ? 'invalid' : 'missing';
}

/**
 * The RFC 6750 challenge: no error code when no token was sent (section 3.1), `invalid_token` for
 * a wrong one, and no `resource_metadata`, since there is no authorization server to discover.
 */
export function bearerChallenge(problem: TokenProblem): string {
  const error = problem === 'invalid' ? 'error="invalid_token", ' : '';
  const what = problem === 'invalid' ? "the bearer token is not this server's token" : 'no bearer token';
  return `Bearer realm="hatchery-mcp", ${error}error_description="${what}; send Authorization: Bearer <token> (serve --token or HATCHERY_MCP_TOKEN)"`;
}

/** Answers an HTTP request with `status` and a JSON-RPC error carrying `message` (ends it if already answering). */
export function reply(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Answers an MCP request without the right token: 401, the challenge, and a JSON-RPC error saying how to pass it. */
export function replyUnauthorized(res: ServerResponse, problem: TokenProblem): void {
  const what = problem === 'invalid' ? 'the bearer token sent is wrong' : 'no bearer token was sent';
  reply(res, 401, `${what}; ${HOW_TO}`, { 'www-authenticate': bearerChallenge(problem) });
}

/**
 * Answers an OAuth discovery or endpoint request: 404 for discovery (a client then falls back, then
 * registers), 401 for registration and the endpoints, each with an OAuth error body (RFC 6749 5.2)
 * whose description says how to pass the token: SDK clients show that body when registration fails.
 */
export function replyOAuth(res: ServerResponse, pathname: string): void {
  const discovery = pathname.startsWith('/.well-known/');
  res.writeHead(discovery ? 404 : 401, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    ...(discovery ? {} : { 'www-authenticate': bearerChallenge('missing') }),
  });
  res.end(JSON.stringify({ error: 'invalid_token', error_description: HOW_TO }));
}
