/**
 * The plain progress lines a run prints on stderr without a terminal: a run longer than 5 s, and
 * any run on a machine slow enough. Set apart from the rest of its output by the tests and the
 * samples alike, so that what they compare does not hang on the machine's speed.
 */

// A progress line and its continuation lines (indented two spaces: it is wrapped to the width).
const PROGRESS_LINE = /^progress: .*\n(?: {2}.*\n)*/gm;

/** `output` with its progress lines left out. */
export function withoutProgress(output: string): string {
  return output.replace(PROGRESS_LINE, '');
}

/** The progress lines in `output`, each with its continuation lines. */
export function progressLines(output: string): string[] {
  return output.match(PROGRESS_LINE) ?? [];
}
