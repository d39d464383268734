import type { ChildProcess } from 'node:child_process';
import { PassThrough, type Stream } from 'node:stream';
import {
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';
import { waitAtMost } from '../core/cancel.js';
import { endTree, KILL_GRACE_MS, spawnTree } from '../core/process/process-tree.js';

/** How long a server gets to exit by itself once its stdin is closed, before it is stopped. */
const STDIN_EOF_GRACE_MS = 1_000;

/** A stdio transport whose stderr can be read. */
export type StdioTransport = Transport & { readonly stderr: Stream | null };

/**
 * The stdio client transport of the SDK, but with the server in its own process group (spawnTree):
 * closing it ends the server and everything the server started, and the exit hook kills what is
 * left if this process exits first.
 */
export class ProcessTreeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, readable before start() so that early output is not lost. */
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  private readonly readBuffer = new ReadBuffer();

  /** `env` is the complete environment of the server (see childEnv). */
  constructor(private readonly params: StdioServerParameters) {}

  /** Starts the server; resolves once it is spawned. */
  start(): Promise<void> {
    if (this.child) throw new Error('ProcessTreeTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawnTree(this.params.command, this.params.args ?? [], {
        cwd: this.params.cwd,
        env: this.params.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      child.on('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.readBuffer.append(chunk);
        } catch (err) {
          // A message larger than the buffer: the stream cannot be resynchronised.
          this.onerror?.(err as Error);
          this.close().catch(() => {});
          return;
        }
        for (;;) {
          try {
            const message = this.readBuffer.readMessage();
            if (!message) break;
            this.onmessage?.(message);
          } catch (err) {
            // One unreadable line (a stray log line on stdout) is skipped.
            this.onerror?.(err as Error);
          }
        }
      });
      child.stdout?.on('error', (err) => this.onerror?.(err));
      child.stderr?.pipe(this.stderr);
    });
  }

  /** Closes stdin (servers exit on EOF), then stops the process tree: SIGTERM, SIGKILL after the grace. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      try {
        child.stdin?.end();
      } catch {
        // Already closed.
      }
      if (!(await waitAtMost(exited, STDIN_EOF_GRACE_MS))) {
        endTree(child);
        await waitAtMost(exited, KILL_GRACE_MS + 500);
      }
    }
    // Whatever the server started is ended by spawnTree when the server exits.
    this.readBuffer.clear();
  }

  /** Writes one message to the server's stdin. */
  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin) {
        reject(new Error('Not connected'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }
}

/**
 * The transport of a stdio server. POSIX: in its own process group. Windows has no process groups
 * to kill, and the SDK's transport resolves `npx`-style command shims there, so it is used as is.
 */
export function stdioTransport(params: StdioServerParameters): StdioTransport {
  if (process.platform !== 'win32') return new ProcessTreeTransport(params);
  return new StdioClientTransport({ ...params, stderr: 'pipe' });
}
