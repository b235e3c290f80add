import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { base58 } from '@scure/base';
import { address, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import { solanaHtlc } from '../../../src/chains/solana/index.ts';
import { findProgramAddressSync } from '../../../src/chains/solana/pda.ts';
import {
  anchorDiscriminator,
  encodeNativeInitiate,
  encodeSplInitiate,
  INITIATE_DISCRIMINATOR,
  programKind,
} from '../../../src/chains/solana/program.ts';
import { INITIATOR, REDEEMER, SECRET_HASH, SOL, terms, USDC } from './fixtures.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const addressHex = (a: string): string => hex(Uint8Array.from(getAddressEncoder().encode(address(a))));
const secret = Uint8Array.from(Buffer.from(SECRET_HASH, 'hex'));

test('the initiate discriminator is sha256("global:initiate")[0..8] = 053f7b71994b940e, as Garden quotes', () => {
  assert.equal(hex(INITIATE_DISCRIMINATOR), '053f7b71994b940e');
  assert.equal(hex(anchorDiscriminator('initiate')), '053f7b71994b940e');
});

test('other Anchor discriminators match the SPL program IDL (redeem, refund, instant_refund)', () => {
  assert.deepEqual([...anchorDiscriminator('redeem')], [184, 12, 86, 149, 70, 196, 97, 225]);
  assert.deepEqual([...anchorDiscriminator('refund')], [2, 96, 183, 251, 63, 208, 46, 46]);
  assert.deepEqual([...anchorDiscriminator('instant_refund')], [211, 202, 103, 41, 183, 147, 59, 251]);
});

test('native initiate data: discriminator, amount, expiry, redeemer, secret hash', () => {
  const data = encodeNativeInitiate({ amount: 354_608_265n, expiresInSlots: 216_000n, redeemer: address(REDEEMER), secretHash: secret });
  assert.equal(
    hex(data),
    '053f7b71994b940e' + '89e4221500000000' + 'c04b030000000000' + addressHex(REDEEMER) + SECRET_HASH,
  );
});

test('SPL initiate data: discriminator, expiry, redeemer, secret hash, amount, None', () => {
  const data = encodeSplInitiate({ amount: 1_000_000n, expiresInSlots: 216_000n, redeemer: address(REDEEMER), secretHash: secret });
  assert.equal(
    hex(data),
    '053f7b71994b940e' + 'c04b030000000000' + addressHex(REDEEMER) + SECRET_HASH + '40420f0000000000' + '00',
  );
});

test('programKind maps the two schemas and refuses others', () => {
  assert.equal(programKind('solana:htlc'), 'native');
  assert.equal(programKind('solana:htlc_spltoken'), 'spl');
  assert.throws(() => programKind('evm:htlc'), /htlc\.schema: evm:htlc is not a Solana HTLC schema/);
});

test('the synchronous PDA derivation agrees with kit getProgramDerivedAddress', async () => {
  const program = address(USDC.htlc.address);
  const seedSets: Uint8Array[][] = [[], [new TextEncoder().encode('swap_account')]];
  for (let i = 0; i < 40; i++) seedSets.push([randomBytes(32), randomBytes(32)], [randomBytes(12), randomBytes(32), randomBytes(32)]);
  for (const seeds of seedSets) {
    const [expected, expectedBump] = await getProgramDerivedAddress({ programAddress: program, seeds });
    assert.deepEqual(findProgramAddressSync(program, seeds), [expected, expectedBump]);
  }
});

test('swapId (native) is the hex of PDA ["swap_account", initiator, secret_hash] of the native program', async () => {
  const [pda] = await getProgramDerivedAddress({
    programAddress: address(SOL.htlc.address),
    seeds: ['swap_account', getAddressEncoder().encode(address(INITIATOR)), secret],
  });
  const id = solanaHtlc.swapId(terms(SOL));
  assert.match(id, /^[0-9a-f]{64}$/);
  assert.equal(id, addressHex(pda));
});

test('swapId (SPL) is the hex of PDA [initiator, secret_hash] of the SPL program', async () => {
  const [pda] = await getProgramDerivedAddress({
    programAddress: address(USDC.htlc.address),
    seeds: [getAddressEncoder().encode(address(INITIATOR)), secret],
  });
  assert.equal(solanaHtlc.swapId(terms(USDC)), addressHex(pda));
});

test('swapId is deterministic, and depends on initiator, secret hash and program only', () => {
  const id = solanaHtlc.swapId(terms(USDC));
  assert.equal(solanaHtlc.swapId(terms(USDC)), id);
  assert.equal(solanaHtlc.swapId(terms(USDC, { amount: 1n, timelock: 1n, redeemer: INITIATOR })), id);
  assert.equal(solanaHtlc.swapId(terms(USDC, { secretHash: SECRET_HASH.toUpperCase() })), id);
  assert.notEqual(solanaHtlc.swapId(terms(USDC, { initiator: REDEEMER })), id);
  assert.notEqual(solanaHtlc.swapId(terms(USDC, { secretHash: 'ab'.repeat(32) })), id);
  assert.notEqual(solanaHtlc.swapId(terms(SOL)), id);
});

test('swapId refuses a malformed initiator or secret hash with a message naming the field', () => {
  assert.throws(() => solanaHtlc.swapId(terms(SOL, { initiator: '0xabc' })), /^Error: initiator: "0xabc" is not a Solana address$/);
  assert.throws(() => solanaHtlc.swapId(terms(SOL, { secretHash: 'abc' })), /^Error: secretHash: must be 64 hex characters/);
  assert.throws(() => solanaHtlc.swapId(terms(SOL, { initiator: base58.encode(new Uint8Array(31)) })), /initiator/);
});
