import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers.js';
import { CHROMIUM, startStudioCli } from './browser.js';

const OUT = path.join(REPO_ROOT, 'test-output', 'studio');

describe('studio in a real browser', () => {
  if (!CHROMIUM) {
    it.skip('needs Chromium: apt-get install chromium (CI installs it)', () => undefined);
    return;
  }
  let studio: Awaited<ReturnType<typeof startStudioCli>>;
  beforeAll(async () => {
    studio = await startStudioCli();
    mkdirSync(OUT, { recursive: true });
  });
  afterAll(async () => {
    await studio?.close();
  });

  it('runs an example, draws its nodes done on the graph, and shows a past run with its output', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox'],
    });
    const errors: string[] = [];
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      page.on('pageerror', (e) => errors.push(e.message));
      // Anything outside the studio would be a CDN or a font: the page must work offline.
      const foreign: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(new URL(studio.url).origin)) foreign.push(r.url());
      });
      await page.goto(studio.url);
      // The token moved to a cookie: the address bar no longer shows it.
      expect(page.url()).not.toContain('token=');
      await page.click('li[data-name="parallel_review"]');
      await page.waitForSelector('#graph g.node[data-id="n_Summary"]');
      await page.screenshot({ path: path.join(OUT, '1-hatchery.png') });

      await page.fill('#run-input', 'Our product is the best, everybody know it.');
      await page.click('#run-start');
      // Model calls take 600 ms here: the branches are seen running before they are done.
      await page.waitForSelector('#graph g.node[data-id="n_Correctness"][data-state="running"]');
      expect(await page.textContent('#r-status')).toBe('running');
      for (const node of ['n_Reviews', 'n_Correctness', 'n_Clarity', 'n_Tone', 'n_Summary'])
        await page.waitForSelector(`#graph g.node[data-id="${node}"][data-state="done"]`);
      await page.waitForSelector('#r-status.succeeded');
      await page.click('.row[data-entry="s5"]');
      await page.screenshot({ path: path.join(OUT, '2-run-done.png'), fullPage: true });
      // scripts/screenshots.mjs: the README's picture, a run drawn on its graph with its timeline.
      if (process.env.HATCHERY_README_SHOT) await page.screenshot({ path: process.env.HATCHERY_README_SHOT });
      expect(await page.textContent('#r-output')).toContain('echo: Our product is the best');

      // A past run, opened again from a fresh page load: timeline, a node's prompt and output.
      await page.goto(new URL(studio.url).origin);
      await page.click('#runs li');
      await page.waitForSelector('.row[data-entry="s5"]');
      await page.click('.row[data-entry="s5"]');
      const detail = await page.textContent('#detail');
      expect(detail).toContain('node Summary');
      expect(detail).toContain('You merge reviews into one numbered list');
      expect(detail).toContain('## Correctness');
      expect(await page.textContent('#r-output')).toContain('echo: Our product is the best');
      await page.screenshot({ path: path.join(OUT, '3-past-run.png'), fullPage: true });

      // A file edit shows up without a reload, with its problem and line.
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        path.join(studio.dir, 'hello.json'),
        '{\n  "name": "hello",\n  "desc": "d",\n  "nodes": [{ "name": "A", "next": "Gone", "usr_prompt": "x" }]\n}\n',
      );
      await page.waitForSelector('#hatcheries li[data-name="hello"] .sub:text("problem")');
      await page.click('li[data-name="hello"]');
      expect(await page.textContent('#h-problems')).toContain('line 4');
      await page.screenshot({ path: path.join(OUT, '4-problem.png') });
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("shows a waiting run's question by its Answer box, not as an error, and a broken file's whole name", async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      path.join(studio.dir, 'pick_colour.json'),
      JSON.stringify({
        name: 'pick_colour',
        desc: 'asks for a colour',
        nodes: [
          { name: 'Q', type: 'ask', question: 'Which colour?', choices: ['red', 'blue'], next: 'E' },
          { type: 'tool', name: 'E', tool_name: 'echo', tool_args: { text: 'picked {{ out.Q }}' } },
        ],
      }),
    );
    const longName = 'a-broken-file-with-a-rather-long-name-that-does-not-fit-the-sidebar.json';
    writeFileSync(path.join(studio.dir, longName), '{"name": "broken", "desc": "d", "nodes": [');
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(studio.url);
      await page.click('li[data-name="pick_colour"]');
      await page.click('#run-start');
      await page.waitForSelector('#r-status.input_required');
      await page.waitForSelector('#r-answer:not([hidden])');
      expect(await page.textContent('#r-question')).toContain('Which colour?');
      expect((await page.textContent('#r-error'))?.trim()).toBe('');
      // The broken file's name is shown whole (wrapped), not cut at the sidebar's edge.
      const name = page.locator('#folder-problems .problem strong', { hasText: 'rather-long-name' });
      await name.waitFor();
      const fits = await name.evaluate((e) => e.scrollWidth <= e.clientWidth + 1);
      expect(fits).toBe(true);
      expect(await name.textContent()).toContain(longName);
    } finally {
      await browser.close();
    }
  });
});
