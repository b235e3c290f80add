import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountRole, address, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { solanaHtlc } from '../../../src/chains/solana/index.ts';
import {
  BLOCKHASH,
  decodeTransaction,
  INITIATOR,
  REDEEMER,
  RELAYER,
  SECRET_HASH,
  SOL,
  terms,
  USDC,
} from './fixtures.ts';

const SYSTEM = '11111111111111111111111111111111';
const options = { gasless: true, relayer: RELAYER, recentBlockhash: BLOCKHASH };
const addressBytes = (a: string): Buffer => Buffer.from(getAddressEncoder().encode(address(a)));
const secret = Buffer.from(SECRET_HASH, 'hex');

async function signingData(t = terms(SOL), o: Parameters<typeof solanaHtlc.sourceSigningData>[1] = options) {
  const data = await solanaHtlc.sourceSigningData(t, o);
  assert.deepEqual(Object.keys(data).sort(), ['versioned_tx', 'versioned_tx_gasless']);
  return data as { versioned_tx: string; versioned_tx_gasless: string | null };
}

async function splAccounts(sponsor: string) {
  const program = address(USDC.htlc.address);
  const initiator = address(INITIATOR);
  const mint = address(USDC.token.address);
  const [identity] = await getProgramDerivedAddress({ programAddress: program, seeds: [] });
  const [swapData] = await getProgramDerivedAddress({ programAddress: program, seeds: [addressBytes(INITIATOR), secret] });
  const [vault] = await getProgramDerivedAddress({ programAddress: program, seeds: [addressBytes(mint)] });
  const [ata] = await findAssociatedTokenPda({ owner: initiator, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return [
    { address: identity, role: AccountRole.WRITABLE },
    { address: swapData, role: AccountRole.WRITABLE },
    { address: vault, role: AccountRole.WRITABLE },
    // The initiator is a read-only signer of the instruction; when it is also the sponsor the
    // message merges both into one writable signer, which decompiles as such.
    { address: initiator, role: sponsor === INITIATOR ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER },
    { address: ata, role: AccountRole.WRITABLE },
    { address: mint, role: AccountRole.READONLY },
    { address: address(sponsor), role: AccountRole.WRITABLE_SIGNER },
    { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    { address: address(SYSTEM), role: AccountRole.READONLY },
  ];
}

function assertSplData(data: ArrayLike<number>, amount: bigint, timelock: bigint): void {
  const b = Buffer.from(data);
  assert.equal(b.length, 8 + 8 + 32 + 32 + 8 + 1);
  assert.equal(b.subarray(0, 8).toString('hex'), '053f7b71994b940e');
  assert.equal(b.readBigUInt64LE(8), timelock, 'expires_in_slots');
  assert.deepEqual(b.subarray(16, 48), addressBytes(REDEEMER), 'redeemer');
  assert.deepEqual(b.subarray(48, 80), secret, 'secret_hash');
  assert.equal(b.readBigUInt64LE(80), amount, 'swap_amount');
  assert.equal(b[88], 0, 'destination_data None');
}

test('native SOL: versioned_tx is a v0 transaction the user pays for and signs alone', async () => {
  const { versioned_tx, versioned_tx_gasless } = await signingData();
  assert.equal(versioned_tx_gasless, null);
  const { transaction, compiled, message, signers } = decodeTransaction(versioned_tx);

  assert.equal(compiled.version, 0);
  assert.deepEqual(signers, [INITIATOR]);
  assert.equal(transaction.signatures[address(INITIATOR)], null, 'unsigned');
  assert.equal(message.feePayer.address, INITIATOR);
  assert.equal(compiled.lifetimeToken, BLOCKHASH);
  assert.deepEqual(compiled.header, { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 2 });

  const [swapAccount] = await getProgramDerivedAddress({
    programAddress: address(SOL.htlc.address),
    seeds: ['swap_account', addressBytes(INITIATOR), secret],
  });
  // Garden's native versioned_tx: accounts [user, swap PDA, System, native program].
  assert.deepEqual(compiled.staticAccounts, [INITIATOR, swapAccount, SYSTEM, SOL.htlc.address]);
  assert.equal(Buffer.from(addressBytes(swapAccount)).toString('hex'), solanaHtlc.swapId(terms(SOL)));

  assert.equal(message.instructions.length, 1);
  const [ix] = message.instructions;
  assert.ok(ix);
  assert.equal(ix.programAddress, SOL.htlc.address);
  assert.deepEqual(ix.accounts, [
    { address: swapAccount, role: AccountRole.WRITABLE },
    { address: INITIATOR, role: AccountRole.WRITABLE_SIGNER },
    { address: SYSTEM, role: AccountRole.READONLY },
  ]);
  assert.ok(ix.data);
  const b = Buffer.from(ix.data);
  assert.equal(b.length, 8 + 8 + 8 + 32 + 32);
  assert.equal(b.subarray(0, 8).toString('hex'), '053f7b71994b940e');
  assert.equal(b.readBigUInt64LE(8), 354_608_265n, 'amount_lamports');
  assert.equal(b.readBigUInt64LE(16), 216_000n, 'expires_in_slots');
  assert.deepEqual(b.subarray(24, 56), addressBytes(REDEEMER), 'redeemer');
  assert.deepEqual(b.subarray(56, 88), secret, 'secret_hash');
});

test('native SOL: versioned_tx_gasless is null even for a gasless app with a relayer', async () => {
  assert.equal((await signingData(terms(SOL), options)).versioned_tx_gasless, null);
});

test('SPL: versioned_tx has the user as fee payer, sponsor and only signer', async () => {
  const { versioned_tx } = await signingData(terms(USDC, { amount: 25_000_000n }));
  const { compiled, message, signers } = decodeTransaction(versioned_tx);
  assert.equal(compiled.version, 0);
  assert.deepEqual(signers, [INITIATOR]);
  assert.equal(message.feePayer.address, INITIATOR);
  assert.equal(compiled.lifetimeToken, BLOCKHASH);
  assert.equal(compiled.header.numSignerAccounts, 1);
  assert.equal(compiled.header.numReadonlySignerAccounts, 0);
  assert.equal(message.instructions.length, 1);
  const [ix] = message.instructions;
  assert.ok(ix?.data);
  assert.equal(ix.programAddress, USDC.htlc.address);
  assert.deepEqual(ix.accounts, await splAccounts(INITIATOR));
  assertSplData(ix.data, 25_000_000n, 216_000n);
});

test('SPL: versioned_tx_gasless has the relayer as fee payer and sponsor (signature 0), the user at 1', async () => {
  const { versioned_tx_gasless } = await signingData(terms(USDC, { amount: 25_000_000n, timelock: 18_000n }));
  assert.ok(versioned_tx_gasless);
  const { transaction, compiled, message, signers } = decodeTransaction(versioned_tx_gasless);
  assert.equal(compiled.version, 0);
  assert.deepEqual(signers, [RELAYER, INITIATOR]);
  assert.deepEqual(Object.values(transaction.signatures), [null, null], 'unsigned');
  assert.equal(message.feePayer.address, RELAYER);
  assert.equal(compiled.staticAccounts[0], RELAYER);
  assert.equal(compiled.staticAccounts[1], INITIATOR);
  assert.equal(compiled.header.numSignerAccounts, 2);
  assert.equal(compiled.header.numReadonlySignerAccounts, 1, 'the initiator signs read-only');
  assert.equal(compiled.lifetimeToken, BLOCKHASH);
  const [ix] = message.instructions;
  assert.ok(ix?.data);
  assert.deepEqual(ix.accounts, await splAccounts(RELAYER));
  assertSplData(ix.data, 25_000_000n, 18_000n);
});

test('SPL: both transactions lock the same swap account, whose address is the swap id', async () => {
  const { versioned_tx, versioned_tx_gasless } = await signingData(terms(USDC));
  assert.ok(versioned_tx_gasless);
  const swapData = (tx: string) => decodeTransaction(tx).message.instructions[0]?.accounts?.[1]?.address;
  assert.equal(swapData(versioned_tx), swapData(versioned_tx_gasless));
  assert.equal(addressBytes(swapData(versioned_tx) ?? '').toString('hex'), solanaHtlc.swapId(terms(USDC)));
});

test('SPL: versioned_tx_gasless is null when the app is not gasless or no relayer is set', async () => {
  for (const o of [
    { gasless: false, relayer: RELAYER, recentBlockhash: BLOCKHASH },
    { gasless: true, recentBlockhash: BLOCKHASH },
    { gasless: true, relayer: '', recentBlockhash: BLOCKHASH },
  ]) {
    const data = await signingData(terms(USDC), o);
    assert.equal(data.versioned_tx_gasless, null, JSON.stringify(o));
    assert.ok(data.versioned_tx.length > 0);
  }
});

test('a missing or malformed recentBlockhash is refused with an error naming it', async () => {
  for (const asset of [SOL, USDC]) {
    await assert.rejects(solanaHtlc.sourceSigningData(terms(asset), { gasless: true, relayer: RELAYER }), {
      message: 'recentBlockhash is required to build Solana transactions',
    });
    await assert.rejects(solanaHtlc.sourceSigningData(terms(asset), { gasless: false, recentBlockhash: '' }), /recentBlockhash is required/);
    await assert.rejects(solanaHtlc.sourceSigningData(terms(asset), { gasless: false, recentBlockhash: '0xdead' }), /^Error: recentBlockhash: "0xdead" is not a base58 blockhash$/);
  }
});

test('bad terms are refused with errors naming the field', async () => {
  const cases: Array<[Parameters<typeof terms>[1], RegExp]> = [
    [{ redeemer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }, /^Error: redeemer: .* is not a Solana address$/],
    [{ initiator: 'abc' }, /^Error: initiator: "abc" is not a Solana address$/],
    [{ secretHash: '0x' + SECRET_HASH }, /^Error: secretHash: must be 64 hex characters/],
    [{ amount: 0n }, /^Error: amount: 0 is outside 1\.\.2\^64-1$/],
    [{ amount: 1n << 64n }, /^Error: amount: 18446744073709551616 is outside/],
    [{ timelock: -1n }, /^Error: timelock: -1 is outside/],
  ];
  for (const [overrides, message] of cases) {
    await assert.rejects(solanaHtlc.sourceSigningData(terms(USDC, overrides), options), message);
  }
  await assert.rejects(solanaHtlc.sourceSigningData(terms(USDC), { ...options, relayer: 'nope' }), /^Error: relayer: "nope" is not a Solana address$/);
});

test('the largest u64 amount and timelock encode exactly', async () => {
  const max = (1n << 64n) - 1n;
  const { versioned_tx } = await signingData(terms(SOL, { amount: max, timelock: max }));
  const data = Buffer.from(decodeTransaction(versioned_tx).message.instructions[0]?.data ?? []);
  assert.equal(data.readBigUInt64LE(8), max);
  assert.equal(data.readBigUInt64LE(16), max);
});

test('signing data is deterministic for the same terms and blockhash', async () => {
  assert.deepEqual(await signingData(terms(USDC)), await signingData(terms(USDC)));
});
