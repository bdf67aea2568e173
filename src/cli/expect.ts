/**
 * --expect: its terms, how repeated flags merge, and the check that every mode it names runs.
 * Pure functions, tested directly; the judging of runs against it lives in report/verdict.ts.
 *
 * A term is `clean` (every run is clean), `race` (the loop races and every other mode is clean)
 * or `MODE=clean` / `MODE=race` (that mode's runs, and only those); a flag holds a comma list of
 * terms and may be repeated. Terms that agree merge; terms that ask opposite things of a mode are
 * a usage error, never last-wins.
 */
import { usageError } from '../shared/errors.js';
import { nearWord, showable, shownChoice, shownValue } from '../shared/text.js';
import { OUTCOMES, type Expectation, type ExpectedOutcome, type Mode, type Outcome } from '../shared/model.js';
import { STRATEGIES, modes as allModes } from '../sweepers/strategies.js';

const FORMS = `clean, race, or MODE=clean / MODE=race per mode (e.g. atomic=clean,loop=race)`;

/** A term that reads as one mistyped (its words near modes and outcomes), which its error may repeat. */
function plainTerm(term: string): boolean {
  return term.split('=').every((word) => showable(word, nearWord(word, [...allModes(), ...OUTCOMES])));
}

function isOutcome(word: string): word is Outcome {
  return (OUTCOMES as readonly string[]).includes(word);
}

function isMode(word: string): word is Mode {
  return (allModes() as readonly string[]).includes(word);
}

/**
 * What `race` asks: the tool's own modes that race by design race (they must run), every other
 * mode is clean. A library's racing port is not among them: it runs only with --lib, so it is
 * named per mode (`bullmq-naive=race`).
 */
function raceTerm(): Expectation {
  const racing = allModes().filter((mode) => STRATEGIES[mode].racesByDesign && STRATEGIES[mode].library === undefined);
  return {
    terms: ['race'],
    modes: Object.fromEntries(racing.map((mode) => [mode, { outcome: 'race', term: 'race' }])),
    others: { outcome: 'clean', term: 'race' },
  };
}

/** One term, alone. */
export function parseTerm(term: string): Expectation {
  if (term === 'clean') return { terms: [term], modes: {}, others: { outcome: 'clean', term } };
  if (term === 'race') return raceTerm();
  const [mode, outcome, extra] = term.split('=').map((part) => part.trim());
  if (mode !== undefined && outcome !== undefined && extra === undefined) {
    const where = plainTerm(term) ? ` in ${JSON.stringify(term)}` : '';
    if (!isMode(mode)) throw usageError(`--expect: ${shownChoice(mode, allModes())}${where} is not a mode; expected one of ${allModes().join(', ')}`);
    if (!isOutcome(outcome)) throw usageError(`--expect: ${shownChoice(outcome, OUTCOMES)}${where} is not an outcome; expected clean or race`);
    const canonical = `${mode}=${outcome}`;
    return { terms: [canonical], modes: { [mode]: { outcome, term: canonical } } };
  }
  throw usageError(`--expect: ${shownValue(term, plainTerm(term))} is not an expectation; expected ${FORMS}`);
}

/** What a term asked of `mode`, in words, for the message when two terms disagree. */
function asked(expected: ExpectedOutcome, mode: Mode): string {
  if (expected.term === 'clean') return `clean (every run clean, ${mode} too)`;
  if (expected.term === 'race' && !STRATEGIES[mode].racesByDesign) return `race (the loop races, every other mode clean, ${mode} too)`;
  return expected.term;
}

/** Both expectations at once, or a usage error naming the first mode they disagree on. */
export function mergeExpectations(a: Expectation, b: Expectation): Expectation {
  for (const mode of allModes()) {
    const left = a.modes[mode] ?? a.others;
    const right = b.modes[mode] ?? b.others;
    if (left && right && left.outcome !== right.outcome) {
      throw usageError(`--expect: ${asked(left, mode)} and ${asked(right, mode)} disagree on ${mode}; give one of them`);
    }
  }
  const others = a.others ?? b.others;
  return {
    terms: [...new Set([...a.terms, ...b.terms])],
    modes: { ...b.modes, ...a.modes },
    ...(others ? { others } : {}),
  };
}

/** A commander argument parser: a comma list of terms, merged with any --expect given before it. */
export function parseExpectation(raw: string, previous?: Expectation): Expectation {
  const terms = raw.split(',').map((term) => term.trim());
  if (terms.some((term) => term === ''))
    throw usageError(
      `--expect: ${shownValue(
        raw,
        terms.every((term) => term === '' || plainTerm(term)),
      )} has an empty term; expected ${FORMS}`,
    );
  const merged = terms.map(parseTerm).reduce((sum, next) => mergeExpectations(sum, next));
  return previous ? mergeExpectations(previous, merged) : merged;
}

/** Every mode the expectation names must run: a verdict on a mode left out could never be reached. */
export function checkExpectedModes(expect: Expectation, modes: readonly Mode[]): void {
  const missing = allModes().filter((mode) => expect.modes[mode] !== undefined && !modes.includes(mode));
  const first = missing[0];
  if (first === undefined) return;
  const term = expect.modes[first]?.term ?? first;
  if (term === 'race') {
    // A run of a library's modes has no loop: what to expect of each of its modes is the user's to
    // say (a fault may make every one of them race), so the line names the form and the modes, and
    // offers no line of its own as though it meant the same.
    const library = modes.some((mode) => STRATEGIES[mode].library !== undefined);
    throw usageError(
      library
        ? `--expect race: expects the loop to race and every other mode to be clean, and this run has no loop; expect each of its modes by name instead (MODE=race or MODE=clean; its modes: ${modes.join(', ')})`
        : '--expect race: expects the loop to race and every other mode to be clean, and needs a loop run (--mode loop or both)',
    );
  }
  throw usageError(
    `--expect ${term}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among the modes run (--mode ${modes.join(',')}); add ${missing.length === 1 ? 'it' : 'them'} to --mode or leave ${missing.length === 1 ? 'it' : 'them'} out of --expect`,
  );
}
