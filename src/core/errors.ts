/** Machine-readable error codes; each names one kind of failure a user can act on. */
export type ErrorCode =
  | 'INVALID_FILE'
  | 'TEMPLATE'
  | 'UNDEFINED_VARIABLE'
  | 'PATH_DENIED'
  | 'FILE_IO'
  | 'MISSING_API_KEY'
  | 'MISSING_INPUT'
  | 'NO_MODEL'
  | 'PROVIDER'
  | 'MAX_STEPS'
  | 'MAX_DEPTH'
  | 'MAX_TURNS'
  | 'MAX_VISITS'
  | 'MAX_ITERATIONS'
  | 'TOOL'
  | 'UNKNOWN_TOOL'
  | 'SCRIPT'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'OUTPUT_SCHEMA'
  | 'INPUT_REQUIRED'
  | 'APPROVAL_DENIED'
  | 'INVALID_ANSWER'
  | 'DECLINED'
  | 'USAGE'
  | 'NOT_FOUND'
  | 'BUDGET_EXHAUSTED'
  | 'RESUME_REFUSED'
  | 'STORE'
  | 'INTERNAL';

/** Where an error happened: every field a user may need to find and fix it. */
export interface ErrorContext {
  /** Hatchery file path. */
  file?: string;
  /** Node name. */
  node?: string;
  /** Field of the node (or top-level key) at fault. */
  field?: string;
  /** Anything else worth printing (variable name, tool name, env var...). */
  [key: string]: unknown;
}

/** Base class of every error hatchery-mcp raises on purpose; `code` tells them apart. */
export class HatcheryError extends Error {
  readonly code: ErrorCode;
  readonly context: ErrorContext;

  constructor(code: ErrorCode, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HatcheryError';
    this.code = code;
    this.context = context;
  }

  /** A one-line location prefix such as `hatchery/a.json: node "Writer": usr_prompt`. */
  get where(): string {
    const parts: string[] = [];
    if (this.context.file) parts.push(this.context.file);
    if (this.context.node) parts.push(`node "${this.context.node}"`);
    if (this.context.field) parts.push(this.context.field);
    return parts.join(': ');
  }

  /** The message with its location, as shown to users. */
  override toString(): string {
    const where = this.where;
    return where && !this.message.startsWith(where) ? `${where}: ${this.message}` : this.message;
  }
}

/** One problem found while validating a hatchery file. */
export interface ValidationProblem {
  /** JSON path inside the file, like `nodes/2/next`. */
  path: string;
  message: string;
  /** `error` (the default) stops the file from loading; a `warning` is reported and the file still loads. */
  severity?: 'error' | 'warning';
  /** What to change to fix it, when the message does not already say so. */
  fix?: string;
  /** 1-based line and column of `path` in the file's source text, when known. */
  line?: number;
  column?: number;
}

/** A problem that stops the file from loading (anything but a warning). */
export function isError(p: ValidationProblem): boolean {
  return p.severity !== 'warning';
}

/** Orders problems by their line and column in the file; problems without a position come first. */
export function bySourcePosition(a: ValidationProblem, b: ValidationProblem): number {
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
}

/** One problem as a line: `file: path (line L, column C): message; fix`. */
export function formatProblem(file: string, p: ValidationProblem): string {
  const at =
    p.line === undefined ? '' : ` (line ${p.line}${p.column === undefined ? '' : `, column ${p.column}`})`;
  const kind = p.severity === 'warning' ? 'warning: ' : '';
  return `${file}: ${p.path || '(root)'}${at}: ${kind}${p.message}${p.fix ? `; ${p.fix}` : ''}`;
}

/** A hatchery file that failed validation; lists every problem at once. */
export class ValidationError extends HatcheryError {
  readonly problems: ValidationProblem[];

  constructor(file: string, problems: ValidationProblem[]) {
    const lines = problems.map((p) => formatProblem(file, p));
    super('INVALID_FILE', lines.join('\n'), { file });
    this.name = 'ValidationError';
    this.problems = problems;
  }

  override toString(): string {
    return this.message;
  }
}

/** Adds location fields to a HatcheryError that lacks them, or wraps any other error. */
export function withContext(
  err: unknown,
  context: ErrorContext,
  fallbackCode: ErrorCode = 'INTERNAL',
): HatcheryError {
  if (err instanceof HatcheryError) {
    for (const [k, v] of Object.entries(context)) {
      if (err.context[k] === undefined && v !== undefined) err.context[k] = v;
    }
    return err;
  }
  if (isAbortError(err))
    return new HatcheryError('ABORTED', 'the run was cancelled', context, { cause: err });
  const msg = err instanceof Error ? err.message : String(err);
  return new HatcheryError(fallbackCode, msg, context, { cause: err });
}

/** True for the errors fetch, the SDKs and AbortSignal raise on cancellation. */
export function isAbortError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; code?: string };
  return (
    e.name === 'AbortError' ||
    e.name === 'APIUserAbortError' ||
    e.code === 'ABORT_ERR' ||
    (err instanceof HatcheryError && err.code === 'ABORTED')
  );
}

/**
 * The reason a stopping server (or CLI) aborts its runs with: the runs end `interrupted`, to be
 * resumed, not `cancelled`, which only a user's cancel is.
 */
export function shutdownReason(message = 'the server is shutting down'): HatcheryError {
  return new HatcheryError('ABORTED', message, { shutdown: true });
}

/** True for an abort reason made by shutdownReason. */
export function isShutdown(reason: unknown): boolean {
  return reason instanceof HatcheryError && reason.context.shutdown === true;
}

/** Formats any thrown value for a user: HatcheryErrors with their location, others by message. */
export function formatError(err: unknown): string {
  if (err instanceof HatcheryError) return err.toString();
  if (err instanceof Error) return err.message;
  return String(err);
}
