/**
 * The one refusal for an installed library that lacks what the tool calls: its name, its version,
 * where it was found and the missing piece, exit 2. Each library's module.ts says what it needs
 * (its `lacks`); resolve.ts asks before any server starts, and the module's loader again when it
 * loads the package for a run.
 */
import { usageError, type EmqError } from '../shared/errors.js';
import type { FoundLibrary } from '../shared/model.js';

/** What one library's module needs of the package's exports: the first piece it lacks, in words (`Worker#moveStalledJobsToWait`), or undefined. */
export type Lacks = (loaded: unknown) => string | undefined;

/** `Name#method` when `holder` is a class whose prototype lacks one of `methods`, `Name` when it is no class at all. */
export function lacksMethods(name: string, holder: unknown, methods: readonly string[]): string | undefined {
  if (typeof holder !== 'function') return name;
  const proto = (holder as { prototype?: Record<string, unknown> }).prototype;
  return methods.map((method) => `${name}#${method}`).find((_, i) => typeof proto?.[methods[i] ?? ''] !== 'function');
}

/** The package's exports as a CommonJS `require` or an ESM import gives them: named exports first, else the default's. */
export function exportsOf(loaded: unknown, probe: string): Record<string, unknown> {
  const module = (loaded ?? {}) as Record<string, unknown>;
  if (module[probe] !== undefined) return module;
  return (module.default ?? {}) as Record<string, unknown>;
}

export function missingApi(found: FoundLibrary, packageName: string, missing: string): EmqError {
  return usageError(
    `${found.asked}: ${packageName} ${found.version} (at ${found.entry}) has no ${missing}, which emq-race calls to race its recovery: install a version that has it`,
  );
}
