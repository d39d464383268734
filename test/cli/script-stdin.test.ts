import { describe, expect, it } from 'vitest';
import { echo, hatch, runCli, tempDir, writeHatchery } from '../helpers.js';

/** Writes `def` in a fresh folder; returns the file. */
const write = (def: unknown) => writeHatchery(tempDir(), 'pipe.json', def);

describe('a script node reads the run input on stdin when it starts the run', () => {
  it('gets --input or piped stdin at the start, the previous output later, and its own stdin when set', async () => {
    const first = write(
      hatch([
        { name: 'Cat', type: 'script', cmd: ['cat'], next: 'Upper' },
        { name: 'Upper', type: 'script', cmd: ['tr', 'a-z', 'A-Z'] },
      ]),
    );
    // The echo node runs first, so the script reads its output, not the input.
    const after = write(
      hatch([
        echo('Say', 'from echo', { next: 'Up' }),
        { name: 'Up', type: 'script', cmd: ['tr', 'a-z', 'A-Z'] },
      ]),
    );
    const own = write(hatch([{ name: 'Cat', type: 'script', cmd: ['cat'], stdin: 'own {{ ctx.input }}' }]));
    const [flag, piped, later, explicit, none] = await Promise.all([
      runCli(['run', first, '--input', 'hello there', '-q']),
      runCli(['run', first, '-q'], { stdin: 'piped text\n' }),
      runCli(['run', after, '--input', 'ignored', '-q']),
      runCli(['run', own, '--input', 'x', '-q']),
      runCli(['run', write(hatch([{ type: 'script', cmd: ['cat'] }])), '--input', '', '-q']),
    ]);
    expect(flag).toMatchObject({ code: 0, stdout: 'HELLO THERE\n' });
    expect(piped).toMatchObject({ code: 0, stdout: 'PIPED TEXT\n' });
    expect(later).toMatchObject({ code: 0, stdout: 'FROM ECHO\n' });
    expect(explicit).toMatchObject({ code: 0, stdout: 'own x\n' });
    expect(none).toMatchObject({ code: 0, stdout: '\n' });
  });

  it("a script that starts a node: tool run reads the tool input, not the caller's last output", async () => {
    const file = write(
      hatch([
        echo('Say', 'caller output', { next: 'Call' }),
        { name: 'Call', type: 'tool', tool_name: 'node:Upper', tool_args: { input: 'tool input' } },
        { name: 'Upper', type: 'script', cmd: ['tr', 'a-z', 'A-Z'] },
      ]),
    );
    const res = await runCli(['run', file, '--input', 'x', '-q']);
    expect(res).toMatchObject({ code: 0, stdout: 'TOOL INPUT\n' });
  });
});
