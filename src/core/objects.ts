/**
 * A copy of `obj` with `fields` set (as `{ ...obj, ...fields }`). A spread followed by more
 * properties gets a V8 hidden class of its own for every object it makes: about 0.6 µs to build,
 * and afterwards every read of it by shared code misses its inline caches (measured 40× slower per
 * read once a thousand such objects went by). This copy shares its hidden class with every other copy
 * of the same keys. For plain data objects with no own `__proto__` key (requests, template variables).
 */
export function withFields<T extends object>(obj: T, fields: Partial<T>): T;
export function withFields<T extends object, F extends object>(obj: T, fields: F): T & F;
export function withFields(obj: object, fields: object): object {
  return Object.assign({}, obj, fields);
}

/**
 * The same text as an internalized string (an object key's own copy). A name read from a file or a
 * regex match is a fresh string, which V8 looks up in its string table on every property read by
 * it; the internalized copy is the key itself. For names kept per node and read on every step.
 */
export function internalized(text: string): string {
  return Object.keys({ [text]: 0 })[0]!;
}
