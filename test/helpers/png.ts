/**
 * Just enough of a PNG decoder to tell a screenshot from a blank one: 8-bit RGB or RGBA,
 * non-interlaced (what Chromium writes), unfiltered row by row and its distinct colours counted.
 */
import { constants, inflateSync } from 'node:zlib';

export interface Screenshot {
  readonly width: number;
  readonly height: number;
  /** Distinct colours (RGBA) among its pixels, counted up to the limit asked for. */
  readonly colours: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Compressed bytes inflated at first: a full-page screenshot has its first colours well within them. */
const FIRST_PREFIX = 64 * 1024;

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

/** Undoes one row's filter into `row`, given the row above (zeros for the first). */
function unfilter(filter: number, line: Uint8Array, row: Uint8Array, up: Uint8Array, channels: number): void {
  const stride = row.length;
  if (filter === 0) row.set(line);
  else if (filter === 1) {
    for (let x = 0; x < stride; x++) row[x] = ((line[x] as number) + (x >= channels ? (row[x - channels] as number) : 0)) & 0xff;
  } else if (filter === 2) {
    for (let x = 0; x < stride; x++) row[x] = ((line[x] as number) + (up[x] as number)) & 0xff;
  } else if (filter === 3) {
    for (let x = 0; x < stride; x++) row[x] = ((line[x] as number) + (((x >= channels ? (row[x - channels] as number) : 0) + (up[x] as number)) >> 1)) & 0xff;
  } else if (filter === 4) {
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? (row[x - channels] as number) : 0;
      const upLeft = x >= channels ? (up[x - channels] as number) : 0;
      row[x] = ((line[x] as number) + paeth(left, up[x] as number, upLeft)) & 0xff;
    }
  } else throw new Error(`not a PNG filter: ${filter}`);
}

/**
 * A PNG's size and how many distinct colours it holds, counting up to `limit`. Rows are decoded
 * from the top only until `limit` colours are seen (the count cannot then grow past it), so a
 * screenshot with colours near its top is not decoded whole: the compressed data is inflated a
 * prefix at a time, a larger one while the colours seen are fewer than the limit. A blank image is
 * decoded to its last row.
 */
export function pngColours(png: Buffer, limit = 1000): Screenshot {
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
  const compressed = Buffer.concat(data);
  const stride = width * channels;
  let up = new Uint8Array(stride);
  let row = new Uint8Array(stride);
  const seen = new Set<number>();
  let decoded = 0;
  for (let prefix = Math.min(FIRST_PREFIX, compressed.length); ; prefix = Math.min(prefix * 4, compressed.length)) {
    // A sync flush: a prefix of the stream gives every byte it holds, without an error for the rest.
    const raw = inflateSync(compressed.subarray(0, prefix), { finishFlush: constants.Z_SYNC_FLUSH });
    const available = Math.min(height, Math.floor(raw.length / (stride + 1)));
    for (; decoded < available && seen.size < limit; decoded++) {
      const start = decoded * (stride + 1);
      unfilter(raw[start] as number, raw.subarray(start + 1, start + 1 + stride), row, up, channels);
      for (let x = 0; x < stride && seen.size < limit; x += channels) {
        const alpha = channels === 4 ? (row[x + 3] as number) : 255;
        seen.add((((row[x] as number) << 24) | ((row[x + 1] as number) << 16) | ((row[x + 2] as number) << 8) | alpha) >>> 0);
      }
      [up, row] = [row, up];
    }
    if (seen.size >= limit || decoded === height) return { width, height, colours: seen.size };
    if (prefix === compressed.length) throw new Error(`a PNG cut short: ${decoded} of ${height} rows`);
  }
}
