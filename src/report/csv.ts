/**
 * --csv: the runs table as comma-separated values, every field quoted and a header row first, as
 * redis-benchmark --csv does. Every column is present on every row, so the file's shape does not
 * depend on which modes ran; a trial column leads.
 */
import { COLUMNS } from './report.js';
import type { RunResult } from '../model.js';

export function csvField(value: string | number): string {
  return `"${String(value).replaceAll('"', '""')}"`;
}

export function renderCsv(runs: readonly RunResult[]): string {
  const header = ['trial', ...COLUMNS.map((c) => c.head.replace(/-\n/g, '').replace(/\n/g, ' '))];
  const rows = runs.map((run) => [run.trial, ...COLUMNS.map((c) => c.value(run))]);
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\n');
}
