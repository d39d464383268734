/**
 * One secret policy (core/secrets.ts) for its three users: the MCP server's redaction of what it
 * sends, the providers' redaction of error messages, and the environment of child processes.
 * Each case is one where two of them used to disagree.
 */
import { describe, expect, it } from 'vitest';
import { childEnv, isAllowedChildVar } from '../../src/core/process/child-env.js';
import { isSecretName, redactText, secretRedactor, secretValues } from '../../src/core/secrets.js';
import { redactSecrets } from '../../src/providers/errors.js';

describe('the secret policy', () => {
  it('names secrets by their suffix, whatever the case', () => {
    for (const name of ['OPENAI_API_KEY', 'GH_TOKEN', 'client_secret', 'DB_PASSWORD', 'AWS_CREDENTIALS']) {
      expect(isSecretName(name)).toBe(true);
    }
    for (const name of ['PATH', 'HOME', 'LANG', 'KEYBOARD_LAYOUT', 'TOKENIZER_PATH']) {
      expect(isSecretName(name)).toBe(false);
    }
  });

  it('keeps a locale-looking variable with a secret name away from child processes', () => {
    // The allow-list let every LC_ variable through, though the server redacted its value.
    const parent = { PATH: '/bin', LC_ALL: 'C', LC_API_TOKEN: 'lc-token-123456789' };
    expect(isAllowedChildVar('LC_API_TOKEN')).toBe(false);
    expect(childEnv(undefined, parent)).toEqual({ PATH: '/bin', LC_ALL: 'C' });
    expect(secretRedactor(parent)('t=lc-token-123456789')).toBe('t=[redacted]');
    // Named by the file, it still reaches the program: that is the file's explicit choice.
    expect(childEnv({ LC_API_TOKEN: `\${LC_API_TOKEN}` }, parent).LC_API_TOKEN).toBe('lc-token-123456789');
  });

  it('removes a vendor-shaped key from what the server sends, as provider errors always did', () => {
    // An sk- key that is in no variable of this process (pasted into a file): the server sent it as is.
    const text = 'use sk-proj-abcdef123456 here';
    expect(redactSecrets(text)).toBe('use sk-*** here');
    expect(secretRedactor({})(text)).toBe('use sk-[redacted] here');
  });

  it('removes the same key values in provider errors and in what the server sends', () => {
    const env = { OPENAI_API_KEY: 'org-key-abcdefgh', HOME: '/home/me' };
    const message = 'bad key org-key-abcdefgh for /home/me';
    expect(redactSecrets(message, env.OPENAI_API_KEY)).toBe('bad key *** for /home/me');
    expect(secretRedactor(env)(message)).toBe('bad key [redacted] for /home/me');
  });

  it('leaves short values and, outside HTTP texts, ordinary words alone', () => {
    expect(secretValues({ SHORT_KEY: 'abc', LONG_KEY: 'abcdefgh', LONGER_KEY: 'abcdefghij' })).toEqual([
      'abcdefghij',
      'abcdefgh',
    ]);
    expect(secretRedactor({ SHORT_KEY: 'abc' })('a basic example, abc')).toBe('a basic example, abc');
    expect(redactText('Authorization: Basic dXNlcjpwdw==', [], { authHeaders: true })).toBe(
      'Authorization: Basic [redacted]',
    );
  });
});
