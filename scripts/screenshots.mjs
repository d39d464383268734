// Writes the README's pictures: docs/images/studio.png (the studio: a run drawn on its graph, with its
// timeline), by running the studio's browser test with HATCHERY_README_SHOT set, and
// docs/images/terminal.png, the live view's final frame captured in docs/images/terminal.ansi drawn as
// a terminal would. Needs Debian's chromium (apt-get install chromium) and a build (npm run build).
// Usage: node scripts/screenshots.mjs [studio|terminal]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const image = (name) => fileURLToPath(new URL(`../docs/images/${name}`, import.meta.url));
const which = process.argv[2];

function wrote(file) {
  process.stdout.write(`wrote ${file} (${Math.round(statSync(file).size / 1024)} KiB)\n`);
}

if (which === undefined || which === 'studio') {
  const out = image('studio.png');
  const res = spawnSync('npx', ['vitest', 'run', 'test/studio/page.test.ts'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, HATCHERY_README_SHOT: out },
  });
  if (res.status !== 0) process.exit(res.status ?? 1);
  wrote(out);
}

if (which === undefined || which === 'terminal') {
  const out = image('terminal.png');
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
  if (!chromium) throw new Error('no chromium: apt-get install chromium');
  const { chromium: driver } = await import('playwright-core');
  const browser = await driver.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    await page.setContent(terminalPage(readFileSync(image('terminal.ansi'), 'utf8')));
    await page.locator('pre').screenshot({ path: out });
  } finally {
    await browser.close();
  }
  wrote(out);
}

/** The ANSI frame as an HTML page in a dark terminal's colours (only the SGR codes the view uses). */
function terminalPage(ansi) {
  const colours = { 31: '#ff6b6b', 32: '#5fd068', 33: '#e5c07b', 36: '#56b6c2' };
  const html = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  let bold = false;
  let dim = false;
  let colour;
  let out = '';
  for (const part of ansi.split(/(\x1b\[[0-9;]*m)/)) {
    const sgr = /^\x1b\[([0-9;]*)m$/.exec(part);
    if (!sgr) {
      const style = [
        bold ? 'font-weight:bold' : '',
        dim ? 'opacity:.6' : '',
        colour ? `color:${colour}` : '',
      ].filter(Boolean);
      out += style.length ? `<span style="${style.join(';')}">${html(part)}</span>` : html(part);
      continue;
    }
    for (const code of (sgr[1] || '0').split(';').map(Number)) {
      if (code === 0) [bold, dim, colour] = [false, false, undefined];
      else if (code === 1) bold = true;
      else if (code === 2) dim = true;
      else if (code === 22) [bold, dim] = [false, false];
      else if (code === 39) colour = undefined;
      else if (colours[code]) colour = colours[code];
    }
  }
  const prompt =
    '<span style="color:#8be9fd">$</span> hatchery-mcp run hatchery/outline-expand.json --input "tide pools"\n';
  return `<!doctype html><meta charset="utf-8"><body style="margin:0;background:#fff">
<pre style="display:inline-block;margin:0;padding:18px 22px;background:#1e1f29;color:#e6e6e6;border-radius:8px;font:14px/1.45 'DejaVu Sans Mono',monospace">${prompt}${out}</pre>`;
}
