import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DEV_CONFIG_PATH, loadServiceConfig, type ServiceConfig } from '../config/service-config.ts';
import { AppError } from '../errors.ts';
import { loadSecretKey, SecretBox } from '../orders/secret-box.ts';
import { migrate, openStore, type Db } from '../store/database.ts';
import { deleteEndpoint, listEndpoints } from '../store/webhooks.ts';
import { registerEndpoint } from '../webhooks/endpoints.ts';

/** Opens the database the service would use (config, DATABASE_URL, HASHLOCK_DATA_DIR), runs `work`, closes it. */
async function withDatabase(
  configFile: string | undefined,
  work: (db: Db, secrets: () => SecretBox, config: ServiceConfig) => Promise<void>,
): Promise<void> {
  const config = loadServiceConfig(configFile ? resolve(configFile) : DEV_CONFIG_PATH);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(store.db);
    await work(store.db, () => new SecretBox(loadSecretKey(process.env, config.dataDir, config.databaseUrl !== undefined)), config);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    console.error(`error: ${err.message}`);
    process.exitCode = 1;
  } finally {
    await store.close();
  }
}

async function checkApp(db: Db, appId: string): Promise<void> {
  const app = await db.selectFrom('apps').select('id').where('id', '=', appId).executeTakeFirst();
  if (!app) throw new AppError('not_found', `--app: no app ${appId}`);
}

const statusList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** `hashlock webhooks add|list|remove`: an app's webhook endpoints, on the database directly. */
export function registerWebhooksCommand(program: Command): void {
  const webhooks = program.command('webhooks').description("manage apps' webhook endpoints (order status changes POSTed to a URL)");

  webhooks
    .command('add')
    .description('register an endpoint for an app and print its signing secret (shown only this once)')
    .requiredOption('--app <id>', 'the app id')
    .requiredOption('--url <url>', 'an http:// or https:// URL')
    .option('--status <statuses>', 'comma-separated order statuses to deliver (default: every status)', statusList, [])
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (opts: { app: string; url: string; status: string[]; config?: string }) => {
      await withDatabase(opts.config, async (db, secrets, config) => {
        await checkApp(db, opts.app);
        const { endpoint, secret } = await registerEndpoint(
          db,
          secrets(),
          { appId: opts.app, url: opts.url, statuses: opts.status, allowPrivateAddresses: config.webhooksAllowPrivateAddresses },
          { url: '--url', statuses: '--status' },
        );
        console.log(`added webhook endpoint ${endpoint.id} ${endpoint.url} (${describeStatuses(endpoint.statuses)})`);
        console.log(`signing secret (shown once; verify the Hashlock-Signature header with it):\n${secret}`);
      });
    });

  webhooks
    .command('list')
    .description("list an app's endpoints")
    .requiredOption('--app <id>', 'the app id')
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (opts: { app: string; config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        await checkApp(db, opts.app);
        const endpoints = await listEndpoints(db, opts.app);
        if (endpoints.length === 0) console.log('no webhook endpoints');
        for (const e of endpoints) {
          const state = e.disabledAt === null ? 'active' : `disabled since ${e.disabledAt}: ${e.disabledReason}`;
          console.log(`${e.id} ${e.url} (${describeStatuses(e.statuses)}) ${state}`);
        }
      });
    });

  webhooks
    .command('remove')
    .description('remove an endpoint and its delivery log')
    .argument('<id>', 'the endpoint id (wh_...)')
    .option('-c, --config <file>', 'service config file (for the database location)')
    .action(async (id: string, opts: { config?: string }) => {
      await withDatabase(opts.config, async (db) => {
        if (!(await deleteEndpoint(db, id))) throw new AppError('not_found', `no webhook endpoint ${id}`);
        console.log(`removed webhook endpoint ${id}`);
      });
    });
}

const describeStatuses = (statuses: readonly string[]): string => (statuses.length === 0 ? 'every status' : statuses.join(','));
