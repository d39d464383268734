const t0 = performance.now();
await import('@modelcontextprotocol/server'); await import('@modelcontextprotocol/server/stdio'); await import('zod');
console.log('bare import', (performance.now() - t0).toFixed(1), 'ms');
