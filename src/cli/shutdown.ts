import { EXIT } from './args.js';

/**
 * Resolves on SIGINT, SIGTERM or (stdio) the client closing stdin; a second signal calls `second`,
 * which exits at once. serve and studio import it without the process-tree module interrupt.ts loads.
 */
export function shutdownRequested(
  watchStdin: boolean,
  second: () => void = () => process.exit(EXIT.CANCELLED),
): { done: Promise<string>; dispose: () => void } {
  let resolve!: (why: string) => void;
  const done = new Promise<string>((r) => {
    resolve = r;
  });
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) return second();
    signalled = true;
    resolve(sig);
  };
  const onEnd = () => resolve('stdin closed');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  if (watchStdin) {
    process.stdin.on('end', onEnd);
    process.stdin.on('close', onEnd);
  }
  return {
    done,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.stdin.off('end', onEnd);
      process.stdin.off('close', onEnd);
    },
  };
}
