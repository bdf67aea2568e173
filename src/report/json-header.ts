/**
 * What every JSON object the tool prints starts with, and the object --json prints when the
 * command fails: apart from the report's shape (json.ts), so that a command's definition and its
 * error path load no more than these few lines.
 */
import { VERSION } from '../shared/model.js';

/**
 * The `schema` number every JSON object carries: raised when a field is renamed or removed or
 * changes its type or meaning, never for an added field. docs/json.md and
 * schema/emq-race.schema.json describe the shape it numbers.
 */
export const JSON_SCHEMA = 1;

/** What every JSON object the tool prints starts with: which version of the tool, and which shape. */
export interface JsonHeader {
  readonly version: string;
  readonly schema: number;
}

export function jsonHeader(): JsonHeader {
  return { version: VERSION, schema: JSON_SCHEMA };
}

/** What --json prints instead of a report when the command fails. */
export interface ErrorJson extends JsonHeader {
  readonly error: { readonly exit: number; readonly message: string };
}

export function errorJson(exit: number, message: string): ErrorJson {
  return { ...jsonHeader(), error: { exit, message } };
}
