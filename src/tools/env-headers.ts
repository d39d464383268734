import { HatcheryError } from '../core/errors.js';
import { envRefs, expandEnvValue } from '../core/process/child-env.js';

/**
 * Headers with `${NAME}` taken from this process's environment (MCP url servers, A2A agents), so
 * that a token need not be written into a file. An unset NAME is an error naming the variable: an
 * empty credential would only come back as a 401 that no longer says what is missing. `who` names
 * the entry (`MCP server "x"`), `fix` the field to correct.
 */
export function envHeaders(
  who: string,
  headers: Readonly<Record<string, string>>,
  fix: string,
  context: Record<string, unknown> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [header, value] of Object.entries(headers)) {
    const unset = envRefs(value).find((name) => process.env[name] === undefined);
    if (unset !== undefined) {
      throw new HatcheryError(
        'TOOL',
        `${who}: its header "${header}" uses \${${unset}}, but the environment variable ${unset} is not set; set ${unset} where hatchery-mcp runs (for a desktop client, in the "env" of its hatchery-mcp entry), or fix ${fix}`,
        { ...context, header, variable: unset },
      );
    }
    out[header] = expandEnvValue(value) ?? '';
  }
  return out;
}
