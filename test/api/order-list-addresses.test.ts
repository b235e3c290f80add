// GET /v2/orders' address and transaction filters compare values as each chain does: EVM and
// Starknet hex, bech32 and Bitcoin script keys in any case; base58 (Solana, Tron, legacy Bitcoin)
// exactly, since there a change of case is another address or none.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { base58 } from '@scure/base';
import { p2pkh, p2wpkh } from '@scure/btc-signer';
import { bitcoinNetwork } from '../../src/chains/bitcoin/network.ts';
import { normalizeSolanaAddress } from '../../src/chains/solana/address.ts';
import { normalizeStarknetAddress } from '../../src/chains/starknet/felt.ts';
import { evmHexToTron } from '../../src/chains/tron/address.ts';
import { insertOrder, type NewOrder } from '../../src/store/orders.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { MAINNET_REGISTRY_PATH, randomHex32, sampleOrder } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Side = Partial<NewOrder['source']>;

const evmAddress = () => `0x${randomBytes(20).toString('hex')}`;
const checksummed = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const solana = base58.encode(randomBytes(32));
const solanaSignature = base58.encode(randomBytes(64));
const tron = evmHexToTron(evmAddress());
const starknet = normalizeStarknetAddress(`0x0${randomBytes(31).toString('hex')}`)!;
const userKey = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true);
const bech32 = p2wpkh(userKey, bitcoinNetwork('bitcoin')).address;
const legacy = p2pkh(userKey, bitcoinNetwork('bitcoin')).address;
const xOnly = Buffer.from(schnorr.getPublicKey(schnorr.utils.randomSecretKey())).toString('hex');

/**
 * `value` with the case of one letter swapped, where both cases are base58 characters, so that the
 * result still decodes (to different bytes); `index` counts such letters from the end.
 */
function caseChanged(value: string, index = 0): string {
  const positions = [...value].flatMap((c, i) => (i > 0 && /[a-km-zA-HJ-NP-Z]/.test(c) && !/[iloILO]/.test(c) ? [i] : []));
  const i = positions[positions.length - 1 - index]!;
  const c = value[i]!;
  const swapped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
  return value.slice(0, i) + swapped + value.slice(i + 1);
}

describeEachStore('GET /v2/orders: addresses as their chain compares them', (kind) => {
  let t: TestApi;
  const orders: Record<string, string> = {};

  const ids = async (query: string) => {
    const res = await t.api.inject({ url: `/v2/orders?${query}&per_page=100`, headers: { 'service-app-id': t.key } });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json<{ result: { data: Array<{ order_id: string }> } }>().result.data).map((o) => o.order_id).sort();
  };
  const only = (...names: string[]) => names.map((n) => orders[n]!).sort();
  const q = (name: string, value: string) => `${name}=${encodeURIComponent(value)}`;

  async function add(name: string, source: Side, destination: Side) {
    const base = sampleOrder(t.appId);
    const order = { ...base, source: { ...base.source, ...source }, destination: { ...base.destination, ...destination } };
    await insertOrder(t.store.db, order);
    orders[name] = order.id;
  }

  before(async () => {
    t = await openTestApi(kind, MAINNET_REGISTRY_PATH);
    const solver = evmAddress();
    // The parties as order creation stores them: each chain's canonical form.
    await add('evm', { chain: 'ethereum', asset: 'ethereum:wbtc', initiator: checksummed, redeemer: solver }, {
      chain: 'bitcoin', asset: 'bitcoin:btc', initiator: xOnly, redeemer: legacy, delegate: xOnly,
    });
    await add('solana', { chain: 'solana', asset: 'solana:sol', initiator: solana, redeemer: base58.encode(randomBytes(32)) }, {
      chain: 'bitcoin', asset: 'bitcoin:btc', initiator: xOnly, redeemer: bech32,
    });
    await add('tron', { chain: 'tron', asset: 'tron:usdt', initiator: tron, redeemer: evmHexToTron(evmAddress()) }, {
      chain: 'starknet', asset: 'starknet:wbtc', initiator: normalizeStarknetAddress('0x1234')!, redeemer: starknet,
    });
    await t.store.db.updateTable('swaps').set({ redeem_tx_hash: solanaSignature }).where('order_id', '=', orders.solana!).where('side', '=', 'source').execute();
  });
  after(() => t.close());

  test('an EVM address matches in any case', async () => {
    assert.deepEqual(await ids(q('from_owner', checksummed)), only('evm'));
    assert.deepEqual(await ids(q('from_owner', checksummed.toLowerCase())), only('evm'));
    assert.deepEqual(await ids(q('address', `0x${checksummed.slice(2).toUpperCase()}`)), only('evm'));
    // A wrong EIP-55 checksum still names the address.
    assert.deepEqual(await ids(q('from_owner', caseChanged(checksummed))), only('evm'));
  });

  test('a Solana address matches exactly: with a letter of another case it is another address', async () => {
    const other = caseChanged(solana);
    assert.equal(normalizeSolanaAddress(other), other, 'the case-changed value is a valid Solana address too');
    assert.deepEqual(await ids(q('from_owner', solana)), only('solana'));
    assert.deepEqual(await ids(q('address', solana)), only('solana'));
    assert.deepEqual(await ids(q('from_owner', other)), []);
    assert.deepEqual(await ids(q('address', other)), []);
    assert.deepEqual(await ids(q('address', solana.toLowerCase())), []);
  });

  test('a Tron address matches exactly, as its 41-prefixed hex form, or all in lower case as Garden\'s SDK asks', async () => {
    assert.deepEqual(await ids(q('from_owner', tron)), only('tron'));
    assert.deepEqual(await ids(q('from_owner', caseChanged(tron))), [], 'a checksum broken by one changed letter names no address');
    assert.deepEqual(await ids(q('address', tron.toLowerCase())), only('tron'));
    assert.deepEqual(await ids(q('from_owner', tron.toLowerCase())), only('tron'));
    assert.deepEqual(await ids(q('address', `t${'a'.repeat(33)}`)), [], 'a lowercased value matches only the address it lowers');
    const hex = Buffer.from(base58.decode(tron).subarray(0, 21)).toString('hex');
    assert.deepEqual(await ids(q('address', hex.toUpperCase())), only('tron'));
  });

  test('Bitcoin: bech32 and script keys match in any case, base58 addresses exactly', async () => {
    assert.deepEqual(await ids(q('to_owner', bech32.toUpperCase())), only('solana'));
    assert.deepEqual(await ids(q('to_owner', bech32)), only('solana'));
    assert.deepEqual(await ids(q('to_owner', legacy)), only('evm'));
    assert.deepEqual(await ids(q('to_owner', caseChanged(legacy))), []);
    assert.deepEqual(await ids(q('address', xOnly.toUpperCase())), only('evm', 'solana'));
  });

  test('a Starknet address matches in any case, with or without leading zeros', async () => {
    assert.deepEqual(await ids(q('to_owner', starknet.toUpperCase().replace('0X', '0x'))), only('tron'));
    assert.deepEqual(await ids(q('to_owner', `0x${starknet.slice(2).replace(/^0+/, '')}`)), only('tron'));
    assert.deepEqual(await ids(q('address', '0x1234')), only('tron'));
  });

  test('tx_hash: EVM hashes in any case, Solana signatures exactly', async () => {
    const hash = `0x${randomHex32()}`;
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: hash }).where('order_id', '=', orders.evm!).where('side', '=', 'source').execute();
    assert.deepEqual(await ids(q('tx_hash', hash)), only('evm'));
    assert.deepEqual(await ids(q('tx_hash', `0x${hash.slice(2).toUpperCase()}`)), only('evm'));
    assert.deepEqual(await ids(q('tx_hash', solanaSignature)), only('solana'));
    assert.deepEqual(await ids(q('tx_hash', caseChanged(solanaSignature))), []);
  });

  test('tx_hash: each funding transaction of a Bitcoin swap funded by several finds it', async () => {
    const [first, second] = [randomHex32(), randomHex32()];
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: `${first},${second}` }).where('order_id', '=', orders.evm!).where('side', '=', 'destination').execute();
    assert.deepEqual(await ids(q('tx_hash', first)), only('evm'));
    assert.deepEqual(await ids(q('tx_hash', second)), only('evm'));
    assert.deepEqual(await ids(q('tx_hash', `${first},${second}`)), [], 'the joined text is no hash');
  });

  test('a value that is no address or hash anywhere matches nothing, and is not an error', async () => {
    assert.deepEqual(await ids(q('address', 'not an address')), []);
    assert.deepEqual(await ids(q('tx_hash', 'zz')), []);
  });
});
