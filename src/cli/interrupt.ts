import { killAllTrees } from '../core/process/process-tree.js';
import { EXIT } from './args.js';
import { shutdownRequested } from './shutdown.js';

/**
 * Ctrl-C (and SIGTERM) for a command that runs a hatchery: the first one cancels the run, which
 * stops its process trees (SIGTERM, then SIGKILL) and lets the command exit 130 once they are gone;
 * a second one kills them at once and exits. Returns the run's controller and the undo.
 */
export function cancelOnInterrupt(): { controller: AbortController; dispose: () => void } {
  const controller = new AbortController();
  const { done, dispose } = shutdownRequested(false, () => {
    killAllTrees();
    process.exit(EXIT.CANCELLED);
  });
  void done.then(() => controller.abort());
  return { controller, dispose };
}
