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

// serve and studio import it from shutdown.ts, which does not load the process-tree module.
export { shutdownRequested } from './shutdown.js';
