/**
 * `emq-race explain`: the subcommand's flags, and the replays it runs on one server session. The
 * server options are the main command's; the replays themselves live beside this file.
 */
import { Option, type Command } from 'commander';
import { ExitCode, usageError } from '../shared/errors.js';
import { outputFileFlag } from '../html/output-file.js';
import type { ExplainReportJson } from '../html/report-data.js';
import { randomQueueName } from '../queue/keys.js';
import { intFlag, parseQueueName, urlOnce } from './options.js';
import type { ServerChoice } from '../server/session.js';
import { addTlsOptions, type TlsFlags } from '../server/tls.js';
import { COUNTER_FORMS, type CounterForm } from '../explain/counter-forms.js';
import type { CounterRace } from '../explain/counter-race.js';
import { serverHeadline } from '../server/connection.js';
import { outputWidth, shownChoice, wrapLines } from '../shared/text.js';
import type { Replay } from '../explain/replay.js';
import { DEFAULT_SCHEDULE, formatEntry, parseSchedule, type ScheduleEntry } from '../explain/schedule.js';
import { VERSION, type Io, LIMITS, type Mode } from '../shared/model.js';
import { modeSets, modes as allModes, replayedModes, replayOf } from '../sweepers/strategies.js';

/** Jobs per detect, as in the main command; the replay's queue holds one. */
const BATCH = LIMITS.batch.default;

interface ExplainFlags extends TlsFlags {
  mode: Mode[];
  schedule: ScheduleEntry[];
  counter?: CounterForm;
  maxStalled: number;
  stalledBefore: number;
  queue?: string;
  url?: string;
  serverBin?: string;
  keep: boolean;
  json: boolean;
  html?: string;
  svg?: string;
}

/** The modes explain replays, as its help and its errors name them: `loop, atomic, or both`. */
function replayedWords(): string {
  return `${replayedModes().join(', ')}, or both`;
}

/** A mode explain replays, `both` (every one of them, from the strategy table), or a comma list of them. */
export function parseExplainModes(raw: string): Mode[] {
  const replayed = replayedModes();
  if (raw === 'both') return replayed;
  const modes: Mode[] = [];
  // "both" stands for every replay inside a list too (`both,loop`).
  for (const part of raw.split(',').flatMap((p) => (p.trim() === 'both' ? replayed : [p.trim()]))) {
    if (!(replayed as readonly string[]).includes(part)) {
      const known = (allModes() as readonly string[]).includes(part) || Object.keys(modeSets()).includes(part);
      const choices = [...allModes(), ...Object.keys(modeSets())];
      throw usageError(`--mode: ${shownChoice(part, choices)} is ${known ? 'a mode explain cannot replay' : 'not a mode'}; explain replays ${replayedWords()}`);
    }
    if (!modes.includes(part as Mode)) modes.push(part as Mode);
  }
  return modes;
}

function parseCounterForm(raw: string): CounterForm {
  if (!(COUNTER_FORMS as readonly string[]).includes(raw)) {
    throw usageError(`--counter: ${shownChoice(raw, COUNTER_FORMS)} is not a form of the counter; expected in-script or client`);
  }
  return raw as CounterForm;
}

/**
 * Adds `explain` to the program. The program must recognise its own options only before a
 * subcommand, or it would take `explain --mode …` for itself.
 */
export function addExplainCommand(program: Command, io: Io, exit: { code: number }): void {
  program.enablePositionalOptions();
  const explain = program
    .command('explain')
    // A stray word (a URL without --url) is an error, never a run on another server than meant.
    .allowExcessArguments(false)
    .description(
      'Replay, step by step on one job, how two sweeps interleave: the loop under a chosen schedule, the atomic script, or the counter alone; then read the outcome back from the server.',
    )
    .addOption(
      new Option('--mode <mode>', `${replayedModes().join(', ')}, both, or a comma list of them (each on a queue of its own)`)
        .default(replayedModes(), 'both')
        .argParser(parseExplainModes),
    )
    .addOption(
      new Option('--schedule <steps>', "loop only: the order of both sweeps' steps, as SWEEP:STEP items")
        // Read as given and parsed in the action, once the flags it may not go with have been ruled
        // out: a partial schedule beside --counter is refused for --counter, not for its steps.
        .default(DEFAULT_SCHEDULE, 'A:detect,B:detect,A:probe,…: A then B at every step'),
    )
    .addOption(
      new Option('--counter <form>', 'run only the counter race: in-script (HINCRBY in a script) or client (read, then write)').argParser(parseCounterForm),
    )
    .addOption(
      new Option('--max-stalled <n>', 'stall count at which the job goes to dead')
        .default(LIMITS.maxStalled.default)
        .argParser(intFlag('--max-stalled', LIMITS.maxStalled)),
    )
    .addOption(
      new Option('--stalled-before <n>', 'stall count the job starts with (below --max-stalled; at max-stalled − 1 the job is dead-lettered)')
        .default(LIMITS.stalledBefore.default)
        .argParser(intFlag('--stalled-before', LIMITS.stalledBefore)),
    )
    .addOption(new Option('--queue <name>', 'queue name: letters, digits, - and _ (default: race- and 8 random hex digits)').argParser(parseQueueName))
    .addOption(new Option('--url <url>', 'server URL (default: $REDIS_URL, else an embedded server)').argParser(urlOnce))
    .addOption(new Option('--server-bin <path>', 'redis-server, valkey-server or redict-server binary for the embedded server'))
    .addOption(new Option('--keep', "leave the replay's keys (and an embedded server) in place").default(false))
    .addOption(new Option('--json', 'print one JSON object on stdout and nothing else').default(false))
    .addOption(new Option('--html <file>', 'also write the replay as one self-contained HTML page').argParser(outputFileFlag('--html')))
    .addOption(new Option('--svg <file>', 'also write the sequence diagram alone, as one SVG file').argParser(outputFileFlag('--svg')));
  // A rediss:// server is replayed on like it is raced on.
  addTlsOptions(explain);
  explain.action(async (options: Omit<ExplainFlags, 'schedule'> & { schedule: string }) => {
    const given = (name: string) => explain.getOptionValueSource(name) === 'cli';
    if (options.counter !== undefined && (given('mode') || given('schedule'))) {
      throw usageError('--counter: runs only the counter race; leave out --mode and --schedule');
    }
    if (given('schedule') && !options.mode.some((mode) => replayOf(mode) === 'loop')) {
      throw usageError("--schedule: orders the loop's steps, but --mode runs no loop");
    }
    exit.code = await explainMain({ ...options, schedule: parseSchedule(options.schedule) }, io);
  });
}

async function explainMain(flags: ExplainFlags, io: Io): Promise<number> {
  // The replays, the server and the page load when explain runs, not for the program's --help.
  const { chooseTarget, openSession, withSession } = await import('../server/session.js');
  const { jsonHeader } = await import('../report/json-header.js');
  const { replayJson } = await import('../explain/replay.js');
  const { counterJson, raceCounter } = await import('../explain/counter-race.js');
  const { describeKept } = await import('../server/kept-server.js');
  const { onStage } = await import('../explain/stage.js');
  const { guardedReplays } = await import('../explain/guard.js');
  const { refuseClusterNode } = await import('../server/cluster/topology.js');
  const { orStopped } = await import('../shared/interrupt.js');
  const { replayAtomic } = await import('../explain/atomic-replay.js');
  const { replayLoop } = await import('../explain/loop-replay.js');
  const { renderCounter, renderReplay } = await import('../explain/render.js');
  const { writeExplainFiles } = await import('../html/report-files.js');
  if (flags.stalledBefore >= flags.maxStalled) {
    throw usageError(
      `--stalled-before: ${flags.stalledBefore} must be below --max-stalled (${flags.maxStalled}): at most ${flags.maxStalled - 1}, where the first recovery already dead-letters the job`,
    );
  }
  const choice: ServerChoice = {
    ...(flags.url !== undefined ? { url: flags.url } : {}),
    ...(flags.serverBin !== undefined ? { serverBin: flags.serverBin } : {}),
    tls: flags,
  };
  chooseTarget(choice, io.env);

  const queues: string[] = [];
  return withSession(
    (signal) => openSession(choice, io.env, signal),
    io,
    flags.keep,
    async (session, interrupts) => {
      await orStopped(interrupts.signal, refuseClusterNode(session.admin, session.target.display, 'explain'));
      const base = flags.queue ?? randomQueueName();
      const server = { ...session.info, url: session.target.display };
      const width = outputWidth(io);
      // The transcript is read once the run is over: by then the tool's own server is gone (unless kept).
      const headline = wrapLines(serverHeadline(server, session.embedded ? (flags.keep ? 'kept' : 'stopped') : undefined), width);
      let report: ExplainReportJson;
      const stage = (queue: string) => {
        queues.push(queue);
        return { queue, stalledBefore: flags.stalledBefore, keep: flags.keep, warn: (line: string) => io.err(`emq-race: ${line}\n`) };
      };

      if (flags.counter !== undefined) {
        const form = flags.counter;
        const race: CounterRace = await guardedReplays(session, [{ mode: 'atomic', queue: base }], flags, interrupts, (guarded) =>
          onStage(session, stage(base), guarded, (s) => raceCounter(s, base, form)),
        );
        interrupts.signal.throwIfAborted();
        const json = { ...jsonHeader(), server: { kind: server.kind, version: server.version, url: server.url }, ...counterJson(race) };
        if (flags.json) io.out(`${JSON.stringify(json)}\n`);
        else io.out(`${headline}\n\n${renderCounter(race, width)}\n`);
        report = json as ExplainReportJson;
      } else {
        const replays: Replay[] = [];
        const queued = flags.mode.map((mode) => ({ mode, queue: flags.mode.length > 1 ? `${base}-${mode}` : base }));
        await guardedReplays(session, queued, flags, interrupts, async (guarded) => {
          for (const { mode, queue } of queued) {
            const plan = { queue, batch: BATCH, maxStalled: flags.maxStalled };
            replays.push(
              await onStage(session, stage(queue), guarded, (s) =>
                replayOf(mode) === 'loop' ? replayLoop(s, { ...plan, schedule: flags.schedule }) : replayAtomic(s, plan),
              ),
            );
          }
        });
        // A signal after the last replay's cleanup still ends the command without its report.
        interrupts.signal.throwIfAborted();
        const json = { ...jsonHeader(), server: { kind: server.kind, version: server.version, url: server.url }, replays: replays.map(replayJson) };
        if (flags.json) io.out(`${JSON.stringify(json)}\n`);
        else io.out(`${[headline, ...replays.map((replay) => renderReplay(replay, width))].join('\n\n')}\n`);
        report = json as ExplainReportJson;
      }
      const url = chooseTarget(choice, io.env)?.url;
      const lost = writeExplainFiles(report, { ...flags, schedule: flags.schedule.map(formatEntry), url }, VERSION, io);
      if (flags.keep)
        describeKept(
          session.target,
          session.embedded,
          queues.map((queue) => ({ queue })),
          io,
          flags.json,
        );
      for (const line of lost) io.err(`emq-race: ${line}\n`);
      return lost.length > 0 ? ExitCode.outputLost : ExitCode.ok;
    },
  );
}
