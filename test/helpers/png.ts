/**
 * Just enough of a PNG decoder to tell a screenshot from a blank one: 8-bit RGB or RGBA,
 * non-interlaced (what Chromium writes), unfiltered row by row into RGBA pixels.
 */
import { inflateSync } from 'node:zlib';

export interface Image {
  readonly width: number;
  readonly height: number;
  /** RGBA, 4 bytes per pixel, row after row. */
  readonly pixels: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

export function decodePng(png: Buffer): Image {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6))
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      data.push(body);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const rows = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const source = y * (stride + 1) + 1;
    const at = y * stride;
    for (let x = 0; x < stride; x++) {
      const value = raw[source + x] ?? 0;
      const left = x >= channels ? (rows[at + x - channels] ?? 0) : 0;
      const up = y > 0 ? (rows[at - stride + x] ?? 0) : 0;
      const upLeft = y > 0 && x >= channels ? (rows[at - stride + x - channels] ?? 0) : 0;
      const predicted = filter === 0 ? 0 : filter === 1 ? left : filter === 2 ? up : filter === 3 ? (left + up) >> 1 : paeth(left, up, upLeft);
      rows[at + x] = (value + predicted) & 0xff;
    }
  }
  const pixels = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    for (let c = 0; c < 3; c++) pixels[i * 4 + c] = rows[i * channels + c] ?? 0;
    pixels[i * 4 + 3] = channels === 4 ? (rows[i * channels + 3] ?? 0) : 255;
  }
  return { width, height, pixels };
}

/** How many distinct colours the image holds, counting up to `limit`. */
export function distinctColours(image: Image, limit = 1000): number {
  const seen = new Set<number>();
  const view = new DataView(image.pixels.buffer, image.pixels.byteOffset, image.pixels.byteLength);
  for (let i = 0; i < image.width * image.height && seen.size < limit; i++) seen.add(view.getUint32(i * 4));
  return seen.size;
}
