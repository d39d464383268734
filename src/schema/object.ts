import { z } from 'zod';
import { didYouMean, listNames, quote } from './suggest.js';

/** Prefix of unknown key messages; the loader splits them into one problem per key. */
export const UNKNOWN_KEY = 'unknown key';
/** Separates the per-key messages of one unknown-keys issue; quoted keys never contain it. */
export const UNKNOWN_KEY_SEPARATOR = '\n';
/** Unknown keys of one object that get a "did you mean"; the rest are only named. */
const SUGGESTED_KEYS = 50;

/**
 * A strict object of the file format: unknown keys are errors that suggest the nearest valid key
 * (aliases included). Keys starting with `$` or `_` are removed before validation by the loader.
 */
export function fileObject<S extends z.core.$ZodLooseShape>(shape: S, aliases: Record<string, string> = {}) {
  const valid = [...Object.keys(shape), ...Object.keys(aliases)];
  const keys = listNames(Object.keys(shape), 30);
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code !== 'unrecognized_keys') return undefined;
      return iss.keys
        .map((k, i) => {
          const hint = i < SUGGESTED_KEYS ? didYouMean(k, valid) : '';
          // Without a near key, the fix is one of the valid keys (or removing it): list them.
          return `${UNKNOWN_KEY} ${quote(k)}${hint || `; valid keys here: ${keys}`}`;
        })
        .join(UNKNOWN_KEY_SEPARATOR);
    },
  });
}

/**
 * A schema built on first use, then kept: a node kind's schema is built when a file first uses that
 * kind (or the whole format is needed), so `serve` does not build the kinds its files never use.
 */
export function lazily<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}
