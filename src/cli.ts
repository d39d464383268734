#!/usr/bin/env node
import { main } from './cli/main.js';
import { printErr } from './cli/print.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    printErr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
