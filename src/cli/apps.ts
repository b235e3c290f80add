// `hashlock apps`: the integrators' apps (API keys), each with its own request limit if the operator
// gives it one.
import { InvalidArgumentError, type Command } from 'commander';
import { createApp, setAppRateLimit, type RequestLimit } from '../store/apps.ts';
import { withDatabase } from './database.ts';

const slippage = (value: string): number => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 10_000) throw new InvalidArgumentError('a whole number of bips, 0 to 10000');
  return n;
};

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000 } as const;
const MAX_WINDOW_MS = 3_600_000;

/** `<max>/<window>`, e.g. `10000/10s`: at most max requests per window (ms, s or m, at most an hour). */
export function parseRateLimit(value: string): RequestLimit {
  const m = /^(\d+)\/(\d+)(ms|s|m)$/.exec(value);
  const max = m ? Number(m[1]) : 0;
  const windowMs = m ? Number(m[2]) * UNIT_MS[m[3] as keyof typeof UNIT_MS] : 0;
  if (!m || max < 1 || max > 2 ** 31 - 1 || windowMs < 1 || windowMs > MAX_WINDOW_MS) {
    throw new InvalidArgumentError('<max>/<window>, e.g. 10000/10s: a positive number of requests per window in ms, s or m (at most 60m)');
  }
  return { max, windowMs };
}

const describeLimit = (limit: RequestLimit | undefined) => (limit ? `${limit.max} requests per ${limit.windowMs / 1000} s` : "the config's per-key limit");

export function registerAppsCommand(program: Command): void {
  const apps = program.command('apps').description('manage the apps (API keys) of integrators');

  apps
    .command('create')
    .description('create an app and print its API key (shown only this once)')
    .requiredOption('--name <name>', 'integrator name')
    .option('--gasless', 'allow gasless (relayed) actions', false)
    .option('--slippage <bips>', 'default slippage in bips', slippage, 0)
    .option('--rate-limit <max/window>', "the app's own request limit, e.g. 10000/10s (default: the config's per-key limit)", parseRateLimit)
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (opts: { name: string; gasless: boolean; slippage: number; rateLimit?: RequestLimit; config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        const { app, key } = await createApp(db, {
          name: opts.name,
          gasless: opts.gasless,
          defaultSlippage: opts.slippage,
          ...(opts.rateLimit ? { rateLimit: opts.rateLimit } : {}),
        });
        console.log(`created app ${app.id} "${app.name}"${app.gasless ? ' (gasless)' : ''}, limited to ${describeLimit(app.rateLimit)}`);
        console.log(`API key (shown once; send it as the service-app-id header):\n${key}`);
      });
    });

  apps
    .command('rate-limit')
    .description("give an app its own request limit, or 'default' for the config's per-key limit (running instances apply it within 30 s)")
    .argument('<app-id>', 'the app id `apps create` printed')
    .argument('<limit>', "<max>/<window> (e.g. 10000/10s) or 'default'", (value: string) => (value === 'default' ? null : parseRateLimit(value)))
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (id: string, limit: RequestLimit | null, opts: { config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        if (!(await setAppRateLimit(db, id, limit))) {
          console.error(`no app ${id}`);
          process.exitCode = 1;
          return;
        }
        console.log(`app ${id} is limited to ${describeLimit(limit ?? undefined)}`);
      });
    });
}
