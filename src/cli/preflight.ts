import type { Command } from 'commander';
import { configOf } from './database.ts';

export function registerPreflightCommands(program: Command): void {
  program
    .command('preflight')
    .description(
      'check a deployment before it serves: each active chain answers with the registry chain id, its HTLC contracts and programs ' +
        "hold the shipped code, tokens have the registry's decimals, the relayer's and solver's balances reach the config's minimums, " +
        'block times agree with the local clock; the database answers and is migrated. Exits 1 on any error',
    )
    .requiredOption('-c, --config <file>', 'service config file')
    .option('--json', 'print the checks as JSON')
    .action(async (opts: { config: string; json?: boolean }) => {
      const config = configOf(opts.config);
      const { formatChecks, runPreflight } = await import('../preflight/preflight.ts');
      const rows = await runPreflight(config);
      const errors = rows.filter((r) => r.status === 'error').length;
      if (opts.json) console.log(JSON.stringify({ ok: errors === 0, checks: rows }, null, 2));
      else console.log(`${formatChecks(rows)}\n\n${errors === 0 ? 'preflight passed' : `preflight failed: ${errors} error(s)`}`);
      process.exitCode = errors === 0 ? 0 : 1;
    });

  program
    .command('migrate')
    .description("apply the database migrations this version brings (under PostgreSQL's migration lock, so instances starting meanwhile wait), then exit")
    .requiredOption('-c, --config <file>', 'service config file')
    .action(async (opts: { config: string }) => {
      const config = configOf(opts.config, { keys: false });
      const { migrate, migrationStatus, openStore } = await import('../store/database.ts');
      const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
      try {
        const before = await migrationStatus(store.db);
        if (before.unknown.length > 0) throw new Error(`the database has migrations this version does not know (${before.unknown.join(', ')}): a newer version migrated it`);
        await migrate(store.db);
        console.log(before.pending.length === 0 ? 'the database is at this version already' : `applied ${before.pending.length} migration(s): ${before.pending.join(', ')}`);
      } finally {
        await store.close();
      }
    });
}
