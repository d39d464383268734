import { raceSignal } from '../../core/cancel.js';
import type { ValidationProblem } from '../../core/errors.js';
import type { Hatchery, NetworkOptions } from '../../engine/contracts.js';
import { listNames } from '../../schema/suggest.js';
import { refUses, useArgProblems } from '../check-args.js';
import { agentFor } from './agent-def.js';
import { A2aAgents, INPUT_SCHEMA, pickSkill } from './agents.js';

/**
 * `validate --connect` for a2a: references: fetches each agent's card (through the network guard,
 * as a run would) and reports agents that do not answer, skill names the card lacks, banelings that
 * name no skill of an agent with several, and tool_args that are not one `message`.
 */
export async function a2aCheck(
  h: Hatchery,
  network: NetworkOptions,
  signal: AbortSignal,
): Promise<ValidationProblem[]> {
  const uses = refUses(h, 'a2a');
  if (uses.length === 0) return [];
  const agents = new A2aAgents(network);
  const problems: ValidationProblem[] = [];
  await Promise.all(
    uses.map(async (u) => {
      const found = agentFor(u.ref, h.def.a2aAgents);
      // A name defined nowhere is a load error already.
      if (!found) return;
      try {
        const agent = await raceSignal(agents.connect(found.def, found.who), signal);
        const skills = agent.card.skills;
        if (u.ref.skill !== undefined) pickSkill(agent, u.ref.skill);
        else if (u.args && skills.length > 1) {
          problems.push({
            path: u.field,
            message: `"${u.ref.ref}" stands for ${skills.length} skills; a baneling calls one: name it as ${u.ref.ref}#<skill> (skills: ${listNames(skills.map((s) => s.id))})`,
          });
          return;
        }
        problems.push(...useArgProblems(u, INPUT_SCHEMA));
      } catch (err) {
        problems.push({ path: u.field, message: (err as Error).message });
      }
    }),
  );
  return problems;
}
