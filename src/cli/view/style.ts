/**
 * Colours of the terminal view as plain SGR codes, switched on or off once per stream: NO_COLOR (any
 * value) turns them off, FORCE_COLOR turns them on ("0" off), otherwise a terminal gets them and a pipe
 * does not. node:util styleText would do, but on Node 20 it ignores NO_COLOR and the stream.
 */

/** The styles the view uses; each wraps a text in its codes, or returns it as is when colour is off. */
export interface Paint {
  readonly on: boolean;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

/** True when texts written to `stream` should be coloured (see the module comment). */
export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** The styles for one stream: real codes when `on`, the identity otherwise. */
export function paint(on: boolean): Paint {
  const sgr = (open: number, close: number) =>
    on ? (text: string) => `\x1b[${open}m${text}\x1b[${close}m` : (text: string) => text;
  return {
    on,
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    dim: sgr(2, 22),
    bold: sgr(1, 22),
  };
}
