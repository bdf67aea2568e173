/**
 * One benchmark size in a process of its own (started by main.ts with --expose-gc), so the heap
 * figures of one size are not inherited by the next. Prints one JSON line of SizeFigures.
 */
import { processIo } from '../cli/process-io.js';
import { parseServerUrl } from '../server/connection.js';
import { measureSize, type MeasureOptions } from './measure.js';

const [url, raw] = process.argv.slice(2);
if (!url || !raw) {
  processIo.err('usage: size-child.js URL OPTIONS_JSON\n');
  process.exit(2);
}
const options = JSON.parse(raw) as MeasureOptions;
const figures = await measureSize(parseServerUrl(url), options);
processIo.out(`${JSON.stringify(figures)}\n`);
process.exit(0);
