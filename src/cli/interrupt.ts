import { killAllTrees } from '../core/process/process-tree.js';
import { EXIT } from './args.js';

/**
 * Ctrl-C (and SIGTERM) for a command that runs a hatchery: the first one cancels the run, which
 * stops its process trees (SIGTERM, then SIGKILL) and lets the command exit 130 once they are gone;
 * a second one kills them at once and exits. Returns the run's controller and the undo.
 */
export function cancelOnInterrupt(): { controller: AbortController; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = () => {
    if (!controller.signal.aborted) {
      controller.abort();
      return;
    }
    killAllTrees();
    process.exit(EXIT.CANCELLED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    controller,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** Resolves on SIGINT, SIGTERM or (stdio) the client closing stdin; a second signal exits at once. */
export function shutdownRequested(watchStdin: boolean): { done: Promise<string>; dispose: () => void } {
  let resolve!: (why: string) => void;
  const done = new Promise<string>((r) => {
    resolve = r;
  });
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) process.exit(EXIT.CANCELLED);
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
