import calculateSlot from 'cluster-key-slot';

/** CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with, one entry per byte value. */
const CRC16 = new Uint16Array(256);
for (let byte = 0; byte < 256; byte++) {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  CRC16[byte] = crc;
}

/**
 * The Redis Cluster hash slot of `key`, as cluster-key-slot computes it (hash tags included: the part
 * between the first `{` and the next `}`, when not empty). Every acquisition and release asks it for its
 * key; cluster-key-slot first copies the key into an array of its UTF-8 bytes, which is most of its cost
 * and garbage on every call. An ASCII key's characters are its bytes, so they are hashed as they are; any
 * other key goes to cluster-key-slot.
 */
export function keySlot(key: string): number {
  let whole = 0;
  let tagged = 0;
  let tagStart = -1;
  for (let i = 0; i < key.length; i++) {
    const char = key.charCodeAt(i);
    if (char > 0x7f) return calculateSlot(key);
    if (tagStart === -1) {
      if (char === 0x7b) tagStart = i + 1;
    } else if (char !== 0x7d) {
      tagged = CRC16[(char ^ (tagged >> 8)) & 0xff]! ^ ((tagged << 8) & 0xffff);
    } else if (i !== tagStart) {
      // A non-empty tag closed: the slot is the tag's, unless a non-ASCII character comes later (then the
      // whole key goes to cluster-key-slot, which gives the same tag's slot: nothing after it counts).
      return tagged & 0x3fff;
    }
    whole = CRC16[(char ^ (whole >> 8)) & 0xff]! ^ ((whole << 8) & 0xffff);
  }
  return whole & 0x3fff;
}
