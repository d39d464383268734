/** What a task's status says of its run, the same for the MCP tasks extension and A2A tasks. */
import { runsCommandLine } from '../journal/state-dir.js';
import type { PendingQuestion, RunSummary } from '../journal/store.js';
import type { ServerHost } from './host.js';

/** What a run that is going says: its node and steps. */
export function progressText(hatchery: string, node: string | undefined, steps: number): string {
  return `${hatchery}: ${node ? `running node "${node}"` : 'running'} (${steps} step${steps === 1 ? '' : 's'} done)`;
}

/** The question a suspended run waits on, in one line: who asks, and what. */
export function askLine(q: PendingQuestion): string {
  return `node "${q.node}" ${q.kind === 'approve' ? 'waits for approval' : 'asks'}: ${q.question}`;
}

/** Why a run a server stop interrupted is not going, and the three ways to continue it. */
export function interruptedText(core: ServerHost, s: Pick<RunSummary, 'id' | 'hatchery' | 'node'>): string {
  return `${s.hatchery}: the server stopped while the run was going${s.node ? ` (at node "${s.node}")` : ''}, so it was interrupted; the nodes that finished are in the run journal. Continue it with hatchery_resume {"run_id": "${s.id}"}, "${runsCommandLine(['resume', s.id], core.runtime.store?.location ?? '')}", or a server started with --resume-interrupted; the task then works again under the same id`;
}
