import { Command, Option } from 'commander';
import { ConfigError } from '../config/schema-check.ts';
import { DEFAULT_PORT } from '../config/service-config.ts';
import { registerAppsCommand } from './apps.ts';
import { registerDeployCommand } from './deploy.ts';
import { registerKeysCommand, warnOfPlaintextKeys } from './keys.ts';
import { registerPreflightCommands } from './preflight.ts';
import { configOf } from './database.ts';
import { registerSwapCommand } from './swap.ts';
import { registerSolversCommand } from './solvers.ts';
import { registerWebhooksCommand } from './webhooks.ts';
import { VERSION } from '../version.ts';
import type { ServiceRole } from '../service.ts';

const program = new Command('hashlock').description('Hashlock cross-chain atomic swap service').version(VERSION);

/**
 * Stops `stop` on Ctrl-C or SIGTERM, once. Installed before a command prints that it is running, so a
 * signal sent as soon as that line is read (by a script, a test) stops it cleanly.
 */
function stopOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping`);
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

program
  .command('dev')
  .description('run local chains (two anvil nodes with the contracts deployed) and the service on the embedded database (what npm start runs)')
  .option('-c, --config <file>', 'service config file', undefined)
  .option('--external-solver', 'also run `hashlock solver` (its own key and data) beside the in-process solver, quoting under it')
  .option('--free-ports', "chains listen on free ports, never on their well-known local ones (8545, 8546, 8899, 8090) even when those are free: a devnet beside another, or a test's")
  .action(async (opts: { config?: string; externalSolver?: boolean; freePorts?: boolean }) => {
    const config = configOf(opts.config);
    // The local chains load only for this command: `serve` never imports them.
    const { describeDev, startDev } = await import('../localnet/dev.ts');
    const dev = await startDev(config, { wellKnownPorts: !opts.freePorts, externalSolver: opts.externalSolver ?? false });
    stopOnSignal(dev.stop);
    console.log(describeDev(config, dev));
  });

program
  .command('serve')
  .description('run the service with a config file (real chains, PostgreSQL via DATABASE_URL)')
  .requiredOption('-c, --config <file>', 'service config file')
  .addOption(
    new Option(
      '--role <role>',
      'api: answer clients and write jobs, holding no key (secrets sealed to secret_public_key); workers: watch the chains, sign and send, run the solver, deliver webhooks, answering only /health and /metrics; all: both',
    )
      .choices(['api', 'workers', 'all'])
      .default('all'),
  )
  .action(async (opts: { config: string; role: ServiceRole }) => {
    // An API instance reads no key: none is decrypted, no key variable taken.
    const config = configOf(opts.config, { keys: opts.role !== 'api' });
    if (opts.role !== 'api') warnOfPlaintextKeys(config);
    const { startService } = await import('../service.ts');
    const service = await startService(config, { role: opts.role });
    stopOnSignal(service.stop);
    console.log(`Hashlock ${opts.role === 'all' ? 'API' : opts.role === 'api' ? 'API (role api: no keys)' : 'workers (role workers: /health and /metrics only)'} listening on ${service.url}`);
    if (opts.role !== 'api') console.log(`secrets are sealed to ${service.secretPublicKey} (secret_public_key of the --role api instances)`);
  });

program
  .command('solver')
  .description(
    'a solver outside the service, with its own key (HASHLOCK_SOLVER_KEY) and job store: it proves its addresses, ' +
      'registers the pairs of its strategies, answers quote requests and fills the orders matched to it, through ' +
      'the solver API key the operator issued (HASHLOCK_SOLVER_API_KEY)',
  )
  .requiredOption('-c, --config <file>', "the solver's config file (chains, registry, strategies, prices, data_dir)")
  .requiredOption('--service <url>', "the service's API")
  .action(async (opts: { config: string; service: string }) => {
    const solverApiKey = process.env.HASHLOCK_SOLVER_API_KEY;
    if (!solverApiKey) {
      console.error('hashlock solver: set HASHLOCK_SOLVER_API_KEY to the solver key `hashlock solvers register` printed');
      process.exit(2);
    }
    const { startSolverProcess } = await import('../solver-process/solver-process.ts');
    const solver = await startSolverProcess(configOf(opts.config), { serviceUrl: opts.service, solverApiKey });
    stopOnSignal(() => solver.stop());
    console.log(`hashlock solver ${solver.id} running against ${opts.service}`);
  });

program
  .command('mcp')
  .description(
    'the MCP server over stdio, for AI agents: a client of a running service as the app whose API key is in ' +
      'HASHLOCK_API_KEY; it never signs and holds no private key',
  )
  .option('--url <url>', 'the service API', process.env.HASHLOCK_API_URL ?? `http://127.0.0.1:${DEFAULT_PORT}`)
  .action(async (opts: { url: string }) => {
    const key = process.env.HASHLOCK_API_KEY;
    if (!key) {
      console.error('hashlock mcp: set HASHLOCK_API_KEY to the app key the agent acts as');
      process.exit(2);
    }
    // Loaded only when asked: the MCP SDK is not needed by the other commands.
    const { runStdioMcp } = await import('../mcp/stdio.ts');
    await runStdioMcp({ url: opts.url, key });
  });

registerAppsCommand(program);
registerDeployCommand(program);
registerKeysCommand(program);
registerPreflightCommands(program);
registerSolversCommand(program);
registerSwapCommand(program);
registerWebhooksCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  throw err;
}
