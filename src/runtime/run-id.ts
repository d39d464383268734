/**
 * Run ids: random (version 4) UUIDs, as crypto.randomUUID makes them, from the same cryptographic
 * source, but written as one string. Node's randomUUID builds its string from twenty concatenations
 * (about half a KiB of garbage per id, a run per served call); here the 36 characters are written into
 * a reused buffer and read out once.
 */
import { randomFillSync } from 'node:crypto';

/** Random bytes for 256 ids, refilled when used up (randomUUID keeps a cache of the same kind). */
const pool = Buffer.alloc(16 * 256);
let used = pool.length;
/** The 36 characters of the id being written. */
const out = Buffer.alloc(36);
/** The two hex digits of each byte value, as character codes. */
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** A new random run id (a lowercase version 4 UUID). */
export function newRunId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const at = used;
  used += 16;
  let o = 0;
  for (let i = 0; i < 16; i++) {
    let b = pool[at + i]!;
    // The version (4) and the variant (10xx) bits, as RFC 9562 sets them.
    if (i === 6) b = (b & 0x0f) | 0x40;
    else if (i === 8) b = (b & 0x3f) | 0x80;
    if (i === 4 || i === 6 || i === 8 || i === 10) out[o++] = 0x2d;
    out[o++] = HEX[b >> 4]!;
    out[o++] = HEX[b & 0x0f]!;
  }
  return out.toString('latin1', 0, 36);
}
