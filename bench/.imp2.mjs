import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const t0 = performance.now();
require(process.argv[2]);
console.log(process.argv[2], (performance.now() - t0).toFixed(1), 'ms');
