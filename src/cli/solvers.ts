// `hashlock solvers`: solvers the operator lets fill orders from outside the service, each with its own
// solver key for the solver API (docs/api.md, "Solver API").
import { InvalidArgumentError, type Command } from 'commander';
import { listSolvers, registerSolver, revokeSolver, SOLVER_ID_PATTERN } from '../store/solver-registry.ts';
import { setSolverSuspended } from '../store/solver-records.ts';
import { SOLVER_KEY_HEADER } from '../api/solver-auth.ts';
import { withDatabase } from './database.ts';

const solverId = (value: string): string => {
  if (!SOLVER_ID_PATTERN.test(value)) throw new InvalidArgumentError('1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit');
  return value;
};

export function registerSolversCommand(program: Command): void {
  const solvers = program.command('solvers').description('manage the registered solvers (solver keys)');

  solvers
    .command('register')
    .description('register a solver and print its solver key (shown only this once)')
    .requiredOption('--id <id>', 'the solver id orders and GET /v2/liquidity name it by', solverId)
    .requiredOption('--name <name>', "the solver's name")
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (opts: { id: string; name: string; config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        const { key } = await registerSolver(db, { id: opts.id, name: opts.name });
        console.log(`registered solver ${opts.id} "${opts.name}"; it proves its addresses (PUT /solver/v1/addresses/{chain}), then registers its pairs (PUT /solver/v1/pairs) to compete for quotes`);
        console.log(`solver key (shown once; send it as the ${SOLVER_KEY_HEADER} header):\n${key}`);
      });
    });

  solvers
    .command('revoke')
    .description('revoke a registered solver: its key stops working at once and it is matched to no new order')
    .argument('<id>', 'the solver id')
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (id: string, opts: { config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        if (!(await revokeSolver(db, id))) {
          console.error(`no registered solver ${id}`);
          process.exitCode = 1;
          return;
        }
        console.log(`solver ${id} is revoked`);
      });
    });

  solvers
    .command('list')
    .description("every solver (the config's and the registered), its standing and its addresses")
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (opts: { config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        for (const s of await listSolvers(db)) {
          const flags = [s.registered ? 'registered' : 'config', ...(s.revoked ? ['revoked'] : !s.active ? ['inactive'] : []), ...(s.suspendedReason ? [`suspended: ${s.suspendedReason}`] : [])];
          console.log(`${s.id} "${s.name}" (${flags.join('; ')})`);
          for (const a of s.addresses) console.log(`  ${a.chain}: ${a.address}`);
        }
      });
    });

  solvers
    .command('suspend')
    .description('suspend a solver from quoting (running instances apply it within 2 s); its matched orders go on')
    .argument('<id>', 'the solver id')
    .option('--reason <text>', 'why, shown in GET /v2/liquidity', 'suspended by the operator')
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (id: string, opts: { reason: string; config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        if (!(await setSolverSuspended(db, id, opts.reason))) return noSolver(id);
        console.log(`solver ${id} is suspended from quoting`);
      });
    });

  solvers
    .command('restore')
    .description('let a suspended solver quote again; orders that fell due before now do not suspend it again')
    .argument('<id>', 'the solver id')
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (id: string, opts: { config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        if (!(await setSolverSuspended(db, id, null))) return noSolver(id);
        console.log(`solver ${id} quotes again`);
      });
    });
}

function noSolver(id: string): void {
  console.error(`no solver ${id}`);
  process.exitCode = 1;
}
