/**
 * Drives the studio in Debian's headless Chromium (playwright-core, no downloaded browser): the built
 * CLI serves a copy of the example folder, runs go to the fake OpenAI server. Shared by the browser
 * test and scripts/screenshots.mjs' twin in the test folder.
 */
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { REPO_ROOT, startCli, tempDir } from '../helpers.js';

/** Debian's chromium, when installed. */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/** Starts `hatchery-mcp studio` on a copy of the examples; resolves with its URL once it printed it. */
export async function startStudioCli(latencyMs = 600) {
  const fake = new FakeOpenAI({ latencyMs });
  await fake.start();
  const dir = path.join(tempDir('studio-browser-'), 'hatchery');
  cpSync(path.join(REPO_ROOT, 'hatchery'), dir, { recursive: true });
  const cli = startCli(['studio', '--dir', dir, '--port', '0'], {
    env: {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: 'sk-browser-test-key-0123456789',
      HATCHERY_STATE: path.join(tempDir('studio-browser-state-'), 'runs'),
    },
  });
  for (let i = 0; i < 200 && !/studio: http/.test(cli.out()); i++)
    await new Promise((r) => setTimeout(r, 50));
  const url = /studio: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32})/.exec(cli.out())?.[1];
  if (!url) throw new Error(`studio did not start: ${cli.err()}`);
  return {
    url,
    dir,
    cli,
    close: async () => {
      cli.child.kill('SIGTERM');
      await cli.exit;
      await fake.close();
    },
  };
}
