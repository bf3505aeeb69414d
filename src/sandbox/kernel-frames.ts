import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Frames of the supervisor's channel to the host: `<64 hex HMAC> <json>`, one
 * per line. The MAC is HMAC-SHA256 under the session key over the frame's
 * sequence number (0 for `ready`, counting up), a newline, and the JSON bytes.
 * Only the supervisor holds the key (the host sends it as the first line on
 * its stdin), so a line written by anything else in the container — or
 * replayed, or reordered — fails the check. See the README's "The host channel".
 */

const MAC_HEX_CHARS = 64;
const SEPARATOR = 0x20;

/** Checks the frames of one channel, in order. */
export class FrameVerifier {
  private sequence = 0;

  constructor(private readonly key: Uint8Array) {}

  /** The JSON bytes of `line` when the supervisor wrote it as the next frame; undefined when not (the sequence does not move). */
  open(line: Buffer): Buffer | undefined {
    if (line.length <= MAC_HEX_CHARS + 1 || line[MAC_HEX_CHARS] !== SEPARATOR) return undefined;
    const given = Buffer.from(line.subarray(0, MAC_HEX_CHARS).toString('latin1'), 'hex');
    const payload = line.subarray(MAC_HEX_CHARS + 1);
    const expected = frameMac(this.key, this.sequence, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    this.sequence += 1;
    return payload;
  }
}

function frameMac(key: Uint8Array, sequence: number, payload: Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${sequence}\n`).update(payload).digest();
}

/** A frame as the supervisor writes it (for test doubles of the kernel). */
export function sealFrame(key: Uint8Array, sequence: number, json: string): string {
  return `${frameMac(key, sequence, Buffer.from(json, 'utf8')).toString('hex')} ${json}\n`;
}
