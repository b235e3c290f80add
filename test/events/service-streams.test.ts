import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ServiceConfig } from '../../src/config/service-config.ts';
import { startService } from '../../src/service.ts';
import { createApp } from '../../src/store/apps.ts';
import { chainlessServiceConfig } from '../helpers/service-config.ts';
import { SseClient } from '../helpers/sse.ts';
import { describeEachStore } from '../helpers/stores.ts';

describeEachStore('event stream caps from the config file', (kind) => {
  let config: ServiceConfig;
  let drop: () => Promise<void>;
  before(async () => {
    ({ config, drop } = await chainlessServiceConfig(kind, { event_streams: { max_open: 3, max_public_per_address: 1 } }));
  });
  after(() => drop());

  test('event_streams.max_public_per_address and max_open reach the running service', async () => {
    const service = await startService(config);
    const open: SseClient[] = [];
    try {
      const { key } = await createApp(service.store.db, { name: 'streams' });
      open.push(await SseClient.open(`${service.url}/explorer/api/events`));
      assert.equal(open[0]!.response.statusCode, 200);
      const second = await fetch(`${service.url}/explorer/api/events`);
      assert.equal(second.status, 429);
      assert.match(((await second.json()) as { error: string }).error, /\(at most 1\)/);
      for (let i = 0; i < 2; i++) {
        open.push(await SseClient.open(`${service.url}/v2/events`, { 'service-app-id': key }));
        assert.equal(open.at(-1)!.response.statusCode, 200, 'keyed streams do not count against the address');
      }
      const fourth = await fetch(`${service.url}/v2/events`, { headers: { 'service-app-id': key } });
      assert.equal(fourth.status, 503, 'three streams are open, the most this instance takes');
    } finally {
      for (const client of open) client.close();
      await service.stop();
    }
  });
});
