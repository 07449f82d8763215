/**
 * Image files as the tests need them: a real header (what image-size reads) followed by padding to
 * the size asked, so that a "5 MiB image" costs no encoder.
 */
function crc32(bytes: Buffer): number {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

function pad(head: Buffer, total: number): Buffer {
  return total <= head.length ? head : Buffer.concat([head, Buffer.alloc(total - head.length, 0x5a)]);
}

/** A PNG signature and IHDR chunk of `width`×`height`, padded to `total` bytes. */
export function pngBytes(width: number, height: number, total = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const type = Buffer.from("IHDR");
  const chunk = Buffer.alloc(8 + 13 + 4);
  chunk.writeUInt32BE(13, 0);
  type.copy(chunk, 4);
  ihdr.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(Buffer.concat([type, ihdr])), 21);
  return pad(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk]), total);
}

/**
 * A JPEG: SOI, `metadataBytes` of APP1 segments (at most 65,533 bytes each), then the SOF0 frame
 * header of `width`×`height`, padded to `total` bytes.
 */
export function jpegBytes(width: number, height: number, metadataBytes = 0, total = 0): Buffer {
  const parts: Buffer[] = [Buffer.from([0xff, 0xd8])];
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  parts.push(app0);
  for (let left = metadataBytes; left > 0;) {
    const n = Math.min(left, 65_533);
    const seg = Buffer.alloc(4 + n, 0x20);
    seg.set([0xff, 0xe1], 0);
    seg.writeUInt16BE(n + 2, 2);
    parts.push(seg);
    left -= n;
  }
  const sof = Buffer.from([
    0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
  ]);
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  parts.push(sof);
  return pad(Buffer.concat(parts), total);
}

export const dataUrl = (mediaType: string, bytes: Buffer): string =>
  `data:${mediaType};base64,${bytes.toString("base64")}`;
