import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToHex } from '@noble/curves/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base58 } from '@scure/base';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listLiquidity, syncSolvers } from '../../src/store/solvers.ts';
import { listSolvers, registerSolver, revokeSolver, solverAddressMessage } from '../../src/store/solver-registry.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { SOLVER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;

describeEachStore('solver API: registered solvers and their proven addresses', (kind) => {
  let t: TestApi;
  let key: string;
  const evm = privateKeyToAccount(generatePrivateKey());
  before(async () => {
    t = await openTestApi(kind);
    key = (await registerSolver(t.store.db, { id: 'maker-1', name: 'Maker One' })).key;
  });
  after(() => t.close());

  const call = async (method: 'GET' | 'PUT', url: string, payload?: object, solverKey: string | null = key) => {
    const res = await t.api.inject({ method, url, headers: solverKey === null ? {} : { 'solver-key': solverKey }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  // A Bitcoin-family party is an x-only key: it signs sha256 of the message (BIP-340).
  const litecoin = (() => {
    const key = schnorr.utils.randomSecretKey();
    return { key, address: bytesToHex(schnorr.getPublicKey(key)) };
  })();
  const litecoinProof = async (signer = litecoin.key, solverId = 'maker-1') => ({
    address: litecoin.address,
    signature: bytesToHex(schnorr.sign(sha256(new TextEncoder().encode(solverAddressMessage(solverId, 'litecoin_localnet', litecoin.address))), signer)),
  });
  const evmProof = async (chain: string, account = evm, solverId = 'maker-1') => ({
    address: account.address,
    signature: await account.signMessage({ message: solverAddressMessage(solverId, chain, account.address) }),
  });

  test('a solver proves an EVM, a Litecoin and a Solana address, and reads them back', async () => {
    const me = await call('GET', '/solver/v1/me');
    assert.deepEqual(me, { status: 200, body: { status: 'Ok', result: { id: 'maker-1', name: 'Maker One', addresses: [], pairs: [] } } });

    const put = await call('PUT', '/solver/v1/addresses/ethereum_localnet', await evmProof('ethereum_localnet'));
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.result.addresses[0].address, evm.address);
    assert.match(put.body.result.addresses[0].proven_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const seed = ed25519.utils.randomSecretKey();
    const solana = base58.encode(ed25519.getPublicKey(seed));
    const message = new TextEncoder().encode(solverAddressMessage('maker-1', 'solana_localnet', solana));
    const signed = await call('PUT', '/solver/v1/addresses/solana_localnet', { address: solana, signature: base58.encode(ed25519.sign(message, seed)) });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const proven = await call('PUT', '/solver/v1/addresses/litecoin_localnet', await litecoinProof());
    assert.equal(proven.status, 200, JSON.stringify(proven.body));
    const after = await call('GET', '/solver/v1/me');
    assert.deepEqual(
      after.body.result.addresses.map((a: Json) => [a.chain, a.address]),
      [
        ['ethereum_localnet', evm.address],
        ['litecoin_localnet', litecoin.address],
        ['solana_localnet', solana],
      ],
    );
    // The proof is kept with the address, and the solver is in no listing until it can fill orders.
    const row = await t.store.db.selectFrom('solver_addresses').select(['proof']).where('solver_id', '=', 'maker-1').where('chain', '=', 'ethereum_localnet').executeTakeFirstOrThrow();
    assert.equal(row.proof, (await evmProof('ethereum_localnet')).signature);
    assert.ok((await listLiquidity(t.store.db)).every((r) => r.solverId !== 'maker-1'));
  });

  test('refusals: no key, an unknown key, a revoked key', async () => {
    assert.equal((await call('GET', '/solver/v1/me', undefined, null)).body.error, 'missing solver key: send it in the solver-key header');
    const unknown = await call('GET', '/solver/v1/me', undefined, 'ab'.repeat(32));
    assert.deepEqual([unknown.status, unknown.body.code, unknown.body.error], [401, 'unauthorized', 'unknown or revoked solver key']);
    assert.equal((await call('GET', '/solver/v1/me', undefined, t.key)).status, 401, 'an app key is no solver key');
    const other = await registerSolver(t.store.db, { id: 'maker-2', name: 'Maker Two' });
    assert.equal((await call('GET', '/solver/v1/me', undefined, other.key)).status, 200);
    assert.equal(await revokeSolver(t.store.db, 'maker-2'), true);
    assert.equal((await call('GET', '/solver/v1/me', undefined, other.key)).status, 401, 'revoked: refused at once');
    assert.equal(await revokeSolver(t.store.db, SOLVER.id), false, "the config's solver has no key to revoke");
    await assert.rejects(registerSolver(t.store.db, { id: SOLVER.id, name: 'taken' }), /a solver 0x7099.* exists already/);
  });

  test('refusals of an address: a wrong signer, another solver\'s proof, a bad address, an unknown chain, a family without proofs, a taken address', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    const strangerKey = schnorr.utils.randomSecretKey();
    const wrongSigner = { address: evm.address, signature: (await evmProof('ethereum_localnet', stranger)).signature };
    const cases: Array<[string, object, number, string, RegExp]> = [
      ['ethereum_localnet', wrongSigner, 400, 'invalid_signature', /^signature: not 0x[0-9a-fA-F]{40}'s signature of "Hashlock solver maker-1 controls/],
      ['ethereum_localnet', await evmProof('ethereum_localnet', evm, 'maker-2'), 400, 'invalid_signature', /^signature: /],
      ['arbitrum_localnet', await evmProof('ethereum_localnet'), 400, 'invalid_signature', /^signature: /],
      ['ethereum_localnet', { address: 'not-an-address', signature: '0x00' }, 400, 'invalid_request', /^address: not /],
      ['ethereum_localnet', { address: evm.address, signature: 'zz' }, 400, 'invalid_signature', /^signature: /],
      ['ethereum_localnet', { address: evm.address }, 400, 'invalid_request', /signature/],
      ['nowhere', await evmProof('nowhere'), 404, 'not_found', /^no active chain nowhere$/],
      ['tron_localnet', { address: 'TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy', signature: 'ab' }, 400, 'not_supported', /cannot be proven yet/],
      ['litecoin_localnet', { address: litecoin.address, signature: (await litecoinProof(strangerKey)).signature }, 400, 'invalid_signature', /^signature: /],
      ['litecoin_localnet', { address: litecoin.address, signature: (await litecoinProof(litecoin.key, 'maker-2')).signature }, 400, 'invalid_signature', /^signature: /],
      ['litecoin_localnet', { address: litecoin.address, signature: 'ab'.repeat(63) }, 400, 'invalid_signature', /^signature: /],
      ['litecoin_localnet', { address: 'ltc-not-a-key', signature: 'ab'.repeat(64) }, 400, 'invalid_request', /^address: not an x-only public key/],
    ];
    for (const [chain, body, status, code, error] of cases) {
      const res = await call('PUT', `/solver/v1/addresses/${chain}`, body);
      assert.equal(res.status, status, `${chain} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, code);
      assert.match(res.body.error, error);
    }
    const solverAccount = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    assert.equal(solverAccount.address, SOLVER.addresses.ethereum_localnet);
    const taken = await call('PUT', '/solver/v1/addresses/ethereum_localnet', await evmProof('ethereum_localnet', solverAccount));
    assert.deepEqual([taken.status, taken.body.code], [409, 'conflict']);
    assert.match(taken.body.error, /^address: another solver holds 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 on ethereum_localnet$/);
  });

  test("syncing the config's solvers leaves the registered ones as they are", async () => {
    await syncSolvers(t.store.db, [SOLVER]);
    const listed = await listSolvers(t.store.db);
    assert.deepEqual(
      listed.map((s) => [s.id, s.registered, s.active, s.revoked, s.addresses.length]),
      [
        [SOLVER.id, false, true, false, 3],
        ['maker-1', true, false, false, 3],
        ['maker-2', true, false, true, 0],
      ],
    );
    assert.equal((await call('GET', '/solver/v1/me')).status, 200);
  });
});
