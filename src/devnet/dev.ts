import { startService, type Service } from '../service.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import { createApp, findAppByKey } from '../store/apps.ts';
import { devnetPath, readDevnetFile, updateDevnetFile } from './devnet-file.ts';

/**
 * `hashlock dev` (`npm start`): the whole service on the embedded database with the localnet
 * registry. A development app is created on first start; its key is kept in devnet.json so that
 * later starts reuse it.
 */
export async function startDev(config: ServiceConfig): Promise<{ service: Service; apiUrl: string; appKey: string }> {
  const service = await startService(config);
  try {
    let appKey = readDevnetFile(config.dataDir).app_key;
    if (!appKey || !(await findAppByKey(service.store.db, appKey))) {
      appKey = (await createApp(service.store.db, { name: 'devnet', gasless: true })).key;
    }
    const apiUrl = service.url;
    updateDevnetFile(config.dataDir, { api_url: apiUrl, app_key: appKey });
    return { service, apiUrl, appKey };
  } catch (err) {
    await service.stop();
    throw err;
  }
}

export function describeDev(config: ServiceConfig, apiUrl: string, appKey: string): string {
  return [
    '',
    `  Hashlock dev service is running (${config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`})`,
    `  API      ${apiUrl}`,
    `  API key  ${appKey}   (send it as the service-app-id header)`,
    `  Docs     ${apiUrl}/docs`,
    `  Written  ${devnetPath(config.dataDir)}`,
    '',
    `  try: curl -H 'service-app-id: ${appKey}' ${apiUrl}/v3/chains`,
    '',
  ].join('\n');
}
