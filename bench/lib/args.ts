/** The value after `name` on the command line (`--rounds 3`), or undefined when it is not there. */
export function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
