import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSecretKey, SecretBox } from '../../src/orders/secret-box.ts';
import { openStore } from '../../src/store/database.ts';
import { BIN, envFor } from '../helpers/hashlock-cli.ts';

const hashlock = (dataDir: string, ...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env: envFor(dataDir), encoding: 'utf8' });

test('hashlock webhooks add, list and remove work on the database, and add prints the real secret once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-webhooks-'));
  const app = hashlock(dataDir, 'apps', 'create', '--name', 'Hooked');
  assert.equal(app.status, 0, app.stderr);
  const appId = /created app ([0-9a-f-]{36})/.exec(app.stdout)![1]!;

  const added = hashlock(dataDir, 'webhooks', 'add', '--app', appId, '--url', 'https://hooks.example.com/in', '--status', 'redeemed, refunded');
  assert.equal(added.status, 0, added.stderr);
  const id = /added webhook endpoint (wh_[0-9a-f]{24}) https:\/\/hooks\.example\.com\/in \(redeemed,refunded\)/.exec(added.stdout)?.[1];
  assert.ok(id, added.stdout);
  const secret = /^(whsec_[A-Za-z0-9_-]{43})$/m.exec(added.stdout)?.[1];
  assert.ok(secret, added.stdout);
  const all = hashlock(dataDir, 'webhooks', 'add', '--app', appId, '--url', 'http://127.0.0.1:8080/all');
  assert.equal(all.status, 0, all.stderr);
  assert.match(all.stdout, /\(every status\)/);

  const listed = hashlock(dataDir, 'webhooks', 'list', '--app', appId);
  assert.equal(listed.status, 0, listed.stderr);
  const lines = listed.stdout.trim().split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[0]!, new RegExp(`^${id} https://hooks.example.com/in \\(redeemed,refunded\\) active$`));
  assert.ok(!listed.stdout.includes('whsec_'), 'the secret is not listed');

  for (const [args, error] of [
    [['--url', 'ftp://example.com/x'], /^error: --url: must be an http:\/\/ or https:\/\/ URL, not ftp:$/m],
    [['--url', 'https://u:p@example.com/'], /--url: must not carry credentials/],
    [['--url', 'https://example.com/', '--status', 'redeemed,paid'], /--status: unknown status 'paid'; known: created,/],
  ] as const) {
    const bad = hashlock(dataDir, 'webhooks', 'add', '--app', appId, ...args);
    assert.equal(bad.status, 1, bad.stdout);
    assert.match(bad.stderr, error);
  }
  const noApp = hashlock(dataDir, 'webhooks', 'add', '--app', '00000000-0000-0000-0000-000000000000', '--url', 'https://example.com/');
  assert.equal(noApp.status, 1);
  assert.match(noApp.stderr, /--app: no app 00000000-0000-0000-0000-000000000000/);

  // The printed secret is the one the service signs with: sealed under the data dir's key.
  const store = await openStore({ dataDir });
  try {
    const row = await store.db.selectFrom('webhook_endpoints').select('secret_ciphertext').where('id', '=', id).executeTakeFirstOrThrow();
    const box = new SecretBox(loadSecretKey({}, dataDir, false));
    assert.equal(Buffer.from(box.open(row.secret_ciphertext)).toString('utf8'), secret);
  } finally {
    await store.close();
  }

  const removed = hashlock(dataDir, 'webhooks', 'remove', id);
  assert.equal(removed.status, 0, removed.stderr);
  assert.match(removed.stdout, new RegExp(`removed webhook endpoint ${id}`));
  const again = hashlock(dataDir, 'webhooks', 'remove', id);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /no webhook endpoint/);
  const left = hashlock(dataDir, 'webhooks', 'list', '--app', appId);
  assert.equal(left.stdout.trim().split('\n').length, 1);
  assert.ok(!left.stdout.includes(id));
});
