/**
 * Redis Cluster's key → slot rule: CRC16 (XModem) of the key, or of its hash tag (the text between
 * the first `{` and the next `}`, when not empty), modulo 16384. Every key of a queue carries the
 * queue name as its hash tag, so a queue's slot is the slot of its name (queueSlot in queue/keys.ts).
 */
export const SLOTS = 16384;

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

/** CRC16/XModem (polynomial 0x1021, initial 0) of the bytes. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0);
  return crc;
}

/** The slot of a key, honouring its hash tag. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % SLOTS;
}
