import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli, startCli, tempDir } from '../helpers.js';
import { packedFiles } from '../install/docs.js';

describe('studio packaging and command line', () => {
  it('ships the page with the package (npm pack), so an installed studio serves it', async () => {
    const files = await packedFiles();
    for (const f of ['index.html', 'app.js', 'style.css']) expect(files).toContain(`dist/studio/assets/${f}`);
  });

  it('refuses a bad --port, a missing folder and a stray argument with usage errors', async () => {
    const port = await runCli(['studio', '--port', '70000']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port must be a port number from 0 to 65535');
    const dir = await runCli(['studio', '--dir', '/nonexistent-studio-dir']);
    expect(dir.code).toBe(2);
    expect(dir.stderr).toContain('no such folder');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const taken = (busy.address() as AddressInfo).port;
    const inUse = await runCli([
      'studio',
      '--dir',
      tempDir('studio-busy-'),
      '--port',
      String(taken),
      '--no-journal',
    ]);
    busy.close();
    expect(inUse.code).toBe(2);
    expect(inUse.stderr).toContain(`cannot listen on 127.0.0.1:${taken} (the port is in use)`);
    const stray = await runCli(['studio', 'hatchery']);
    expect(stray.code).toBe(2);
    const help = await runCli(['studio', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('127.0.0.1 only');
    expect((await runCli(['studoi'])).stderr).toContain('did you mean "studio"');
  });

  it('prints its URL with a 32-hex token on 127.0.0.1, and stops cleanly on SIGTERM', async () => {
    const cli = startCli(['studio', '--dir', tempDir('studio-empty-'), '--no-journal']);
    for (let i = 0; i < 200 && !cli.out().includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(cli.out()).toMatch(/^studio: http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32}\n$/);
    cli.child.kill('SIGTERM');
    expect(await cli.exit).toBe(0);
    expect(cli.err()).toContain('stopping (SIGTERM)');
  });
});
