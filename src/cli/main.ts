// The `datalyst` command (bin/datalyst.js runs this file through tsx).
import { createNodeContext } from './node-context.ts';
import { runCli } from './program.ts';

process.exitCode = await runCli(process.argv.slice(2), createNodeContext());
