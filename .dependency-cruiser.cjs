/**
 * The layers of src/ (see docs/architecture.md), checked on every `npm test`: no import circles,
 * and every import points down. From the bottom:
 *   lua/, shared/  →  server/  →  queue/  →  audit/  →  consequences/
 *   →  libraries/  →  sweepers/  →  race/  →  explain/, report/  →  explore/  →  grid/  →  html/  →  cli/, bench/ (the entry points)
 */
const ABOVE = {
  server: ['libraries', 'queue', 'audit', 'consequences', 'sweepers', 'race', 'explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  queue: ['libraries', 'audit', 'consequences', 'sweepers', 'race', 'explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  audit: ['libraries', 'consequences', 'sweepers', 'race', 'explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  consequences: ['libraries', 'sweepers', 'race', 'explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  libraries: ['sweepers', 'race', 'explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  sweepers: ['race', 'explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  race: ['explain', 'report', 'explore', 'grid', 'html', 'cli', 'bench'],
  explain: ['report', 'explore', 'grid', 'html', 'cli', 'bench'],
  report: ['explain', 'explore', 'grid', 'html', 'cli', 'bench'],
  explore: ['grid', 'html', 'cli', 'bench'],
  grid: ['html', 'cli', 'bench'],
  html: ['cli', 'bench'],
};

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'An import circle: two modules that each need the other.', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'model-imports-nothing',
      comment: 'shared/model.ts holds the words every layer shares, so it may import nothing of the tool.',
      severity: 'error',
      from: { path: '^src/shared/model\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'shared-stays-at-the-bottom',
      comment: 'shared/ may import only itself and lua/.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/(shared|lua)/' },
    },
    {
      name: 'lua-stands-alone',
      comment: 'The scripts and their one loader import nothing outside lua/.',
      severity: 'error',
      from: { path: '^src/lua/' },
      to: { path: '^src/', pathNot: '^src/lua/' },
    },
    {
      name: 'only-entry-points-import-cli',
      comment: 'Nothing below the command line imports it; the benchmark (bench/) is the other entry point.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli|bench)/' },
      to: { path: '^src/cli/' },
    },
    ...Object.entries(ABOVE).map(([layer, above]) => ({
      name: `${layer}-points-down`,
      comment: `${layer}/ imports only layers below it.`,
      severity: 'error',
      from: { path: `^src/${layer}/` },
      to: { path: `^src/(${above.join('|')})/` },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a layer that needs another's types depends on it all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
