import type { Command } from 'commander';
import { AppError } from '../errors.ts';
import { loadSecretKey, SecretBox } from '../orders/secret-box.ts';
import { appExists } from '../store/apps.ts';
import type { Db } from '../store/database.ts';
import { withDatabase } from './database.ts';
import { deleteEndpoint, listEndpoints } from '../store/webhooks.ts';
import { registerEndpoint } from '../webhooks/endpoints.ts';

async function checkApp(db: Db, appId: string): Promise<void> {
  if (!(await appExists(db, appId))) throw new AppError('not_found', `--app: no app ${appId}`);
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
      await withDatabase(opts.config, async (db, config) => {
        await checkApp(db, opts.app);
        const { endpoint, secret } = await registerEndpoint(
          db,
          new SecretBox(loadSecretKey(process.env, config.dataDir, config.databaseUrl !== undefined, config.keys.secret)),
          { appId: opts.app, url: opts.url, statuses: opts.status, allowPrivateAddresses: config.webhooksAllowPrivateAddresses },
          { url: '--url', statuses: '--status' },
        );
        console.log(`added webhook endpoint ${endpoint.id} ${endpoint.url} (${describeStatuses(endpoint.statuses)})`);
        console.log(`signing secret (shown once; verify the Hashlock-Signature header with it):\n${secret}`);
      }, { keys: true });
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
