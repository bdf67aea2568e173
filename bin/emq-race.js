#!/usr/bin/env node
import { run } from '../dist/src/cli/program.js';

process.exitCode = await run(process.argv);
