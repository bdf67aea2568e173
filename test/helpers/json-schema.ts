/**
 * The shipped JSON Schema (schema/emq-race.schema.json), closed for the tests: the file lets a
 * later version add fields, but here every object the tool prints may carry only the fields the
 * file lists, so a field added without documenting it fails.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const SCHEMA_FILE = new URL('../../../schema/emq-race.schema.json', import.meta.url);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every object schema that lists its properties, with no others allowed. */
function closed(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value)]));
  if (schema.properties !== undefined && schema.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

let validate: ValidateFunction | undefined;

// strict: an unknown keyword or a misspelt one in the file is an error, not ignored.
const AJV_OPTIONS: Options = { allErrors: true, strict: true, allowUnionTypes: true };
const AJV_VERSION = (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version;

/**
 * The compiled validator, kept as ajv's standalone code beside this file (in the build output) under
 * a name that is the hash of the schema, ajv's version and the options: compiling the schema costs
 * a second or two of CPU in every test file that checks a JSON, loading the same code a few
 * hundredths. A changed schema or ajv has another name, so it is compiled afresh; the code is
 * written to a file of its own and renamed into place, so test files running side by side never
 * read half of one. Where the file cannot be read or written, the schema is compiled here.
 */
function validator(): ValidateFunction {
  if (validate) return validate;
  const text = readFileSync(SCHEMA_FILE, 'utf8');
  const hash = createHash('sha256')
    .update(`${AJV_VERSION}\n${JSON.stringify(AJV_OPTIONS)}\n${text}`)
    .digest('hex')
    .slice(0, 16);
  const cached = fileURLToPath(new URL(`./.schema-validator-${hash}.cjs`, import.meta.url));
  const load = createRequire(import.meta.url);
  try {
    validate = load(cached) as ValidateFunction;
    return validate;
  } catch {
    // Not compiled yet for this schema: compile it below.
  }
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
  validate = ajv.compile(closed(JSON.parse(text) as Json) as object);
  try {
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, standaloneCode.default(ajv, validate));
    renameSync(partial, cached);
  } catch {
    // A build folder that cannot be written to only means the next file compiles it again.
  }
  return validate;
}

/** Fails with every error ajv found, each with its path in the object. */
export function assertMatchesSchema(value: unknown, what = 'the JSON'): void {
  const valid = validator()(value);
  const errors = (validator().errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  assert.ok(valid, `${what} does not match schema/emq-race.schema.json:\n${errors.join('\n')}`);
}

/** What the tool's words say the schema must hold: checked against the file, both ways where the file lists fields. */
export interface SchemaWords {
  /** Every mode of the strategy table, in table order. */
  readonly modes: readonly string[];
  /** Every field a fully populated run carries in the JSON. */
  readonly runFields: readonly string[];
  /** Every field a trial summary carries. */
  readonly trialFields: readonly string[];
  /** Every figure whose source a run states. */
  readonly sourced: readonly string[];
}

/**
 * Where schema/emq-race.schema.json and the tool disagree, one line each: a mode missing from the
 * mode enum or an enum value no mode has; a field of a run, a trial summary or a run's sources that
 * the schema does not list, or one it lists that the tool never prints. Empty when they agree.
 */
export function schemaGaps(words: SchemaWords): string[] {
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as {
    definitions: Record<string, { enum?: string[]; properties?: Record<string, { properties?: Record<string, unknown> }> }>;
  };
  const defs = schema.definitions;
  const listed = (name: string, fields: readonly string[], have: readonly string[]): string[] => [
    ...fields.filter((field) => !have.includes(field)).map((field) => `${name} lacks ${JSON.stringify(field)}`),
    ...have.filter((field) => !fields.includes(field)).map((field) => `${name} lists ${JSON.stringify(field)}, which the tool never prints`),
  ];
  const enumModes = defs.mode?.enum ?? [];
  const runProperties = defs.run?.properties ?? {};
  return [
    ...words.modes.filter((mode) => !enumModes.includes(mode)).map((mode) => `the mode enum lacks ${JSON.stringify(mode)}`),
    ...enumModes.filter((mode) => !words.modes.includes(mode)).map((mode) => `the mode enum has ${JSON.stringify(mode)}, which is no mode`),
    ...listed('run', words.runFields, Object.keys(runProperties)),
    ...listed('trialSummary', words.trialFields, Object.keys(defs.trialSummary?.properties ?? {})),
    ...listed('run.sources', words.sourced, Object.keys(runProperties.sources?.properties ?? {})),
  ];
}
