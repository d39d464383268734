const t0 = performance.now();
await import('zod');
const t1 = performance.now();
await import(process.argv[2]);
console.log(process.argv[2].split('/dist/')[1], 'after zod', (performance.now() - t1).toFixed(1), 'ms');
