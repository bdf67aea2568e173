/**
 * The shipped JSON Schema (schema/emq-race.schema.json), closed for the tests: the file lets a
 * later version add fields, but here every object the tool prints may carry only the fields the
 * file lists, so a field added without documenting it fails.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

export const SCHEMA_FILE = new URL('../../../schema/emq-race.schema.json', import.meta.url);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every object schema that lists its properties, with no others allowed. */
export function closed(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value)]));
  if (schema.properties !== undefined && schema.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

let validate: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!validate) {
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Json;
    // strict: an unknown keyword or a misspelt one in the file is an error, not ignored.
    validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(closed(schema) as object);
  }
  return validate;
}

/** Fails with every error ajv found, each with its path in the object. */
export function assertMatchesSchema(value: unknown, what = 'the JSON'): void {
  const valid = validator()(value);
  const errors = (validator().errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  assert.ok(valid, `${what} does not match schema/emq-race.schema.json:\n${errors.join('\n')}`);
}
