/**
 * One benchmark size in a process of its own (started by main.ts with --expose-gc), so the heap
 * figures of one size are not inherited by the next. Prints one JSON line of SizeFigures.
 */
import { processIo } from '../cli/process-io.js';
import { parseServerUrl } from '../server/connection.js';
import { measureFloor, measureSize, type FloorOptions, type MeasureOptions } from './measure.js';

// With `floor` after the options, only the floor, once (FloorOptions): main.ts's turn beside the CLI's race.
const [url, raw, what] = process.argv.slice(2);
if (!url || !raw) {
  processIo.err('usage: size-child.js URL OPTIONS_JSON [floor]\n');
  process.exit(2);
}
let figures: unknown;
if (what === 'floor') {
  const options = JSON.parse(raw) as FloorOptions;
  // Every count is needed: the queue's deletion counts jobs + live, and a missing one would leave
  // every job hash behind.
  if (![options.jobs, options.live, options.batch, options.sweepers].every((n) => Number.isInteger(n) && n >= 0)) {
    processIo.err('size-child.js: floor options need whole numbers jobs, live, batch and sweepers\n');
    process.exit(2);
  }
  figures = await measureFloor(parseServerUrl(url), options);
} else {
  figures = await measureSize(parseServerUrl(url), JSON.parse(raw) as MeasureOptions);
}
processIo.out(`${JSON.stringify(figures)}\n`);
process.exit(0);
