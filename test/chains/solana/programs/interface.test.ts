/**
 * Known answers: the C programs and the client side against Garden's published Anchor IDLs
 * (@gardenfi/core: solana_native_swaps v0.3.0, solana_spl_swaps v0.4.0): discriminators, account
 * order and flags, PDA seeds, argument encodings, SwapAccount layouts, events and error codes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { AccountRole, address, getAddressEncoder, type Address, type Instruction } from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { decodeSwapEvent } from '../../../../src/chains/solana/events.ts';
import {
  nativeInitiateInstruction,
  nativeInstantRefundInstruction,
  nativeRedeemInstruction,
  nativeRefundInstruction,
  splInitiateInstruction,
  splInstantRefundInstruction,
  splRedeemInstruction,
  splRefundInstruction,
} from '../../../../src/chains/solana/instructions.ts';
import { findProgramAddress } from '../../../../src/chains/solana/pda.ts';
import {
  anchorAccountDiscriminator,
  anchorDiscriminator,
  anchorEventDiscriminator,
  encodeNativeInitiate,
  encodeSplInitiate,
  INITIATE_DISCRIMINATOR,
  INSTANT_REFUND_DISCRIMINATOR,
  NATIVE_SWAP_ERRORS,
  REDEEM_DISCRIMINATOR,
  REFUND_DISCRIMINATOR,
  SPL_SWAP_ERRORS,
  SWAP_ACCOUNT_DISCRIMINATOR,
} from '../../../../src/chains/solana/program.ts';
import { CONTRACTS_DIR } from '../../../../src/localnet/solana/programs/build.ts';
import { LOCALNET_PROGRAM_IDS, LOCALNET_PROGRAM_KEY_SEEDS, localnetProgramKeypair } from '../../../../src/localnet/solana/programs/deploy.ts';
import { decodeNativeSwapAccount, decodeSplSwapAccount, NATIVE_SWAP_ACCOUNT_BYTES, SPL_SWAP_ACCOUNT_BYTES } from '../../../../src/chains/solana/swap-account.ts';
import { filledAddress } from '../fixtures.ts';

// ---- Garden's IDLs ----
type IdlType = string | { array: [string, number] } | { option: string };
interface IdlField { name: string; type: IdlType }
interface IdlAccount { name: string; writable?: boolean; signer?: boolean; address?: string; pda?: { seeds: { kind: string; value?: number[]; path?: string }[] } }
interface Idl {
  address: string;
  metadata: { name: string; version: string };
  instructions: { name: string; discriminator: number[]; accounts: IdlAccount[]; args: IdlField[] }[];
  accounts: { name: string; discriminator: number[] }[];
  events: { name: string; discriminator: number[] }[];
  errors: { code: number; name: string }[];
  types: { name: string; type: { fields: IdlField[] } }[];
}

const gardenCore = dirname(createRequire(import.meta.url).resolve('@gardenfi/core/package.json'));
function loadIdl(relative: string): Idl {
  const text = readFileSync(join(gardenCore, 'dist/src/lib/solana/idl', relative), 'utf8');
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as Idl;
}
const NATIVE_IDL = loadIdl('native/solana_native_swaps.json.d.ts');
const SPL_IDL = loadIdl('spl/solana_spl_swaps.json.d.ts');

const typeFields = (idl: Idl, name: string): IdlField[] => idl.types.find((t) => t.name === name)!.type.fields;
const instruction = (idl: Idl, name: string) => idl.instructions.find((i) => i.name === name)!;

// ---- Borsh by the IDL ----
const addressBytes = (a: Address): Uint8Array => Uint8Array.from(getAddressEncoder().encode(a));
function fieldSize(type: IdlType): number {
  if (type === 'u64') return 8;
  if (type === 'u8') return 1;
  if (type === 'pubkey') return 32;
  if (typeof type === 'object' && 'array' in type) return type.array[1];
  throw new Error(`no fixed size for ${JSON.stringify(type)}`);
}
function borsh(fields: IdlField[], values: Record<string, unknown>): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const field of fields) {
    const value = values[field.name];
    if (field.type === 'u64') {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigUint64(0, value as bigint, true);
      parts.push(b);
    } else if (field.type === 'u8') parts.push(Uint8Array.of(value as number));
    else if (field.type === 'pubkey') parts.push(addressBytes(value as Address));
    else if (typeof field.type === 'object' && 'array' in field.type) parts.push(value as Uint8Array);
    else if (typeof field.type === 'object' && 'option' in field.type) {
      if (value === null) parts.push(Uint8Array.of(0));
      else {
        const bytes = value as Uint8Array;
        const len = new Uint8Array(4);
        new DataView(len.buffer).setUint32(0, bytes.length, true);
        parts.push(Uint8Array.of(1), len, bytes);
      }
    } else throw new Error(`type ${JSON.stringify(field.type)}`);
  }
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

// ---- the C sources ----
const cSource = (file: string): string => readFileSync(join(CONTRACTS_DIR, file), 'utf8');
function cDefines(file: string): Map<string, bigint> {
  return new Map([...cSource(file).matchAll(/^#define (\w+) (0x[0-9a-f]+|\d+)(ULL)?$/gm)].map((m) => [m[1]!, BigInt(m[2]!)]));
}
const RUNTIME = cDefines('htlc_runtime.h');
const NATIVE_C = cDefines('native_swaps.c');
const SPL_C = cDefines('spl_swaps.c');
const leU64 = (value: bigint): number[] => Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn));
const screamingToPascal = (name: string): string => name.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

const PROGRAM = address(filledAddress(9));
const INITIATOR = address(filledAddress(1));
const REDEEMER = address(filledAddress(2));
const SPONSOR = address(filledAddress(3));
const MINT = address(filledAddress(4));
const SECRET = new Uint8Array(32).fill(0x5e);
const SECRET_HASH = new Uint8Array(32).fill(0xa5);

describe("interface known answers against Garden's IDLs", () => {
  test('the IDLs are the versions the programs speak', () => {
    assert.deepEqual([NATIVE_IDL.metadata.name, NATIVE_IDL.metadata.version], ['solana_native_swaps', '0.3.0']);
    assert.deepEqual([SPL_IDL.metadata.name, SPL_IDL.metadata.version], ['solana_spl_swaps', '0.4.0']);
  });

  test('instruction discriminators: IDL = sha256("global:<name>")[0..8] = client constants = the C programs', () => {
    const ours: Record<string, Uint8Array> = { initiate: INITIATE_DISCRIMINATOR, redeem: REDEEM_DISCRIMINATOR, refund: REFUND_DISCRIMINATOR, instant_refund: INSTANT_REFUND_DISCRIMINATOR };
    for (const idl of [NATIVE_IDL, SPL_IDL]) {
      assert.deepEqual(idl.instructions.map((i) => i.name).sort(), Object.keys(ours).sort());
      for (const ix of idl.instructions) {
        assert.deepEqual([...anchorDiscriminator(ix.name)], ix.discriminator, ix.name);
        assert.deepEqual([...ours[ix.name]!], ix.discriminator, ix.name);
        assert.deepEqual(leU64(RUNTIME.get(`IX_${ix.name.toUpperCase()}`)!), ix.discriminator, `C IX_${ix.name.toUpperCase()}`);
      }
    }
    assert.equal(Buffer.from(REDEEM_DISCRIMINATOR).toString('hex'), 'b80c569546c461e1');
  });

  test('SwapAccount and event discriminators: IDL = sha256("account:"/"event:" name) = client = C', () => {
    for (const idl of [NATIVE_IDL, SPL_IDL]) {
      assert.deepEqual(idl.accounts, [{ name: 'SwapAccount', discriminator: [...SWAP_ACCOUNT_DISCRIMINATOR] }]);
      assert.deepEqual([...anchorAccountDiscriminator('SwapAccount')], idl.accounts[0]!.discriminator);
      assert.deepEqual(leU64(RUNTIME.get('ACCOUNT_SWAP_ACCOUNT')!), idl.accounts[0]!.discriminator);
      assert.deepEqual(idl.events.map((e) => e.name).sort(), ['Initiated', 'InstantRefunded', 'Redeemed', 'Refunded']);
      for (const event of idl.events) {
        assert.deepEqual([...anchorEventDiscriminator(event.name)], event.discriminator, event.name);
        const cName = `EVENT_${event.name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
        assert.deepEqual(leU64(RUNTIME.get(cName)!), event.discriminator, cName);
      }
    }
  });

  test('error codes 6000+: IDL = client tables = the C programs', () => {
    for (const [idl, ours, c] of [[NATIVE_IDL, NATIVE_SWAP_ERRORS, NATIVE_C], [SPL_IDL, SPL_SWAP_ERRORS, SPL_C]] as const) {
      assert.deepEqual(Object.fromEntries(idl.errors.map((e) => [e.name, e.code])), ours);
      const fromC = Object.fromEntries([...c].filter(([k, v]) => k.startsWith('ERR_') && v >= 6000n).map(([k, v]) => [screamingToPascal(k.slice(4)), Number(v)]));
      assert.deepEqual(fromC, ours);
    }
  });

  test("SwapAccount layouts: the C offsets and the decoders follow the IDL's field order (SPL: plus the mint)", () => {
    for (const [idl, c, size, mint] of [[NATIVE_IDL, NATIVE_C, NATIVE_SWAP_ACCOUNT_BYTES, false], [SPL_IDL, SPL_C, SPL_SWAP_ACCOUNT_BYTES, true]] as const) {
      let offset = 8;
      for (const field of typeFields(idl, 'SwapAccount')) {
        const cName = `SWAP_${field.name.toUpperCase()}`.replace('SWAP_AMOUNT_LAMPORTS', 'SWAP_AMOUNT').replace('SWAP_SWAP_AMOUNT', 'SWAP_AMOUNT').replace('SWAP_IDENTITY_PDA_BUMP', 'SWAP_IDENTITY_BUMP');
        assert.equal(c.get(cName), BigInt(offset), `${idl.metadata.name} ${field.name} at ${offset}`);
        offset += fieldSize(field.type);
      }
      assert.equal(offset, size);
      assert.equal(c.get('SWAP_ACCOUNT_LEN'), BigInt(mint ? size + 32 : size));
      if (mint) assert.equal(c.get('SWAP_MINT'), BigInt(size));
    }
    const native = { amount_lamports: 354_608_265n, expiry_slot: 987_654_321n, initiator: INITIATOR, redeemer: REDEEMER, secret_hash: SECRET_HASH };
    const nativeData = Uint8Array.from([...SWAP_ACCOUNT_DISCRIMINATOR, ...borsh(typeFields(NATIVE_IDL, 'SwapAccount'), native)]);
    assert.deepEqual(decodeNativeSwapAccount(nativeData), { amountLamports: 354_608_265n, expirySlot: 987_654_321n, initiator: INITIATOR, redeemer: REDEEMER, secretHash: SECRET_HASH });
    const spl = { expiry_slot: 5n, initiator: INITIATOR, redeemer: REDEEMER, secret_hash: SECRET_HASH, swap_amount: 1_000_000n, identity_pda_bump: 253, sponsor: SPONSOR };
    const gardenSpl = Uint8Array.from([...SWAP_ACCOUNT_DISCRIMINATOR, ...borsh(typeFields(SPL_IDL, 'SwapAccount'), spl)]);
    const expected = { expirySlot: 5n, initiator: INITIATOR, redeemer: REDEEMER, secretHash: SECRET_HASH, swapAmount: 1_000_000n, identityPdaBump: 253, sponsor: SPONSOR };
    assert.deepEqual(decodeSplSwapAccount(gardenSpl), { ...expected, mint: undefined }, "Garden's layout decodes, without a mint");
    assert.deepEqual(decodeSplSwapAccount(Uint8Array.from([...gardenSpl, ...addressBytes(MINT)])), { ...expected, mint: MINT });
    assert.throws(() => decodeNativeSwapAccount(Uint8Array.from([...nativeData.subarray(0, 7), 0, ...nativeData.subarray(8)])), /discriminator/);
    assert.throws(() => decodeSplSwapAccount(gardenSpl.subarray(0, 100)), /100 bytes, expected at least 153/);
  });

  test('events decode as the IDL lays them out', () => {
    const cases: [Idl, 'native' | 'spl', string, Record<string, unknown>, unknown][] = [
      [NATIVE_IDL, 'native', 'Initiated', { amount_lamports: 7n, expires_in_slots: 9n, initiator: INITIATOR, redeemer: REDEEMER, secret_hash: SECRET_HASH }, { name: 'Initiated', amount: 7n, expiresInSlots: 9n, initiator: INITIATOR, redeemer: REDEEMER, secretHash: SECRET_HASH }],
      [SPL_IDL, 'spl', 'Initiated', { swap_amount: 7n, expires_in_slots: 9n, initiator: INITIATOR, mint: MINT, redeemer: REDEEMER, secret_hash: SECRET_HASH, destination_data: Uint8Array.of(1, 2, 3) }, { name: 'Initiated', amount: 7n, expiresInSlots: 9n, initiator: INITIATOR, mint: MINT, redeemer: REDEEMER, secretHash: SECRET_HASH, destinationData: Uint8Array.of(1, 2, 3) }],
      [SPL_IDL, 'spl', 'Redeemed', { initiator: INITIATOR, secret: SECRET }, { name: 'Redeemed', initiator: INITIATOR, secret: SECRET }],
      [NATIVE_IDL, 'native', 'Refunded', { initiator: INITIATOR, secret_hash: SECRET_HASH }, { name: 'Refunded', initiator: INITIATOR, secretHash: SECRET_HASH }],
      [SPL_IDL, 'spl', 'InstantRefunded', { initiator: INITIATOR, secret_hash: SECRET_HASH }, { name: 'InstantRefunded', initiator: INITIATOR, secretHash: SECRET_HASH }],
    ];
    for (const [idl, kind, name, values, expected] of cases) {
      const data = Uint8Array.from([...idl.events.find((e) => e.name === name)!.discriminator, ...borsh(typeFields(idl, name), values)]);
      assert.deepEqual(decodeSwapEvent(kind, data), expected, `${kind} ${name}`);
    }
    assert.equal(decodeSwapEvent('native', new Uint8Array(40)), undefined);
  });

  test('initiate arguments encode as the IDL lists them', () => {
    const args = { amount: 354_608_265n, expiresInSlots: 216_000n, redeemer: REDEEMER, secretHash: SECRET_HASH };
    assert.deepEqual(
      encodeNativeInitiate(args),
      Uint8Array.from([...INITIATE_DISCRIMINATOR, ...borsh(instruction(NATIVE_IDL, 'initiate').args, { amount_lamports: args.amount, expires_in_slots: args.expiresInSlots, redeemer: REDEEMER, secret_hash: SECRET_HASH })]),
    );
    assert.deepEqual(
      encodeSplInitiate(args),
      Uint8Array.from([...INITIATE_DISCRIMINATOR, ...borsh(instruction(SPL_IDL, 'initiate').args, { expires_in_slots: args.expiresInSlots, redeemer: REDEEMER, secret_hash: SECRET_HASH, swap_amount: args.amount, destination_data: null })]),
    );
  });

  test('account order, writable and signer flags, fixed addresses and PDA seeds of every instruction match the IDLs', async () => {
    const ata = async (owner: Address) => (await findAssociatedTokenPda({ owner, mint: MINT, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
    const swapRef = { program: PROGRAM, initiator: INITIATOR, secretHash: SECRET_HASH };
    const args = { amount: 1n, expiresInSlots: 2n, redeemer: REDEEMER, secretHash: SECRET_HASH };
    const accountsByName: Record<string, Address> = {
      initiator: INITIATOR,
      redeemer: REDEEMER,
      sponsor: SPONSOR,
      mint: MINT,
      initiator_token_account: await ata(INITIATOR),
      redeemer_token_account: await ata(REDEEMER),
      system_program: SYSTEM_PROGRAM_ADDRESS,
      token_program: TOKEN_PROGRAM_ADDRESS,
    };
    const built: [Idl, string, Instruction][] = [
      [NATIVE_IDL, 'initiate', await nativeInitiateInstruction({ program: PROGRAM, initiator: INITIATOR, args })],
      [NATIVE_IDL, 'redeem', await nativeRedeemInstruction({ ...swapRef, redeemer: REDEEMER, secret: SECRET })],
      [NATIVE_IDL, 'refund', await nativeRefundInstruction(swapRef)],
      [NATIVE_IDL, 'instant_refund', await nativeInstantRefundInstruction({ ...swapRef, redeemer: REDEEMER })],
      [SPL_IDL, 'initiate', await splInitiateInstruction({ program: PROGRAM, initiator: INITIATOR, mint: MINT, sponsor: SPONSOR, args })],
      [SPL_IDL, 'redeem', await splRedeemInstruction({ ...swapRef, mint: MINT, sponsor: SPONSOR, redeemer: REDEEMER, secret: SECRET })],
      [SPL_IDL, 'refund', await splRefundInstruction({ ...swapRef, mint: MINT, sponsor: SPONSOR })],
      [SPL_IDL, 'instant_refund', await splInstantRefundInstruction({ ...swapRef, mint: MINT, sponsor: SPONSOR, redeemer: REDEEMER })],
    ];
    const seedBytes = (seed: { kind: string; value?: number[]; path?: string }): Uint8Array => {
      if (seed.kind === 'const') return Uint8Array.from(seed.value!);
      if (seed.kind === 'arg' && seed.path === 'secret_hash') return SECRET_HASH;
      if (seed.kind === 'account') return addressBytes(accountsByName[seed.path!]!);
      throw new Error(`seed ${JSON.stringify(seed)}`);
    };
    for (const [idl, name, ix] of built) {
      const where = `${idl.metadata.name}.${name}`;
      const expected = instruction(idl, name).accounts;
      assert.equal(ix.accounts!.length, expected.length, `${where}: account count`);
      for (const [i, account] of expected.entries()) {
        const meta = ix.accounts![i]!;
        const writable = meta.role === AccountRole.WRITABLE || meta.role === AccountRole.WRITABLE_SIGNER;
        const signer = meta.role === AccountRole.READONLY_SIGNER || meta.role === AccountRole.WRITABLE_SIGNER;
        assert.equal(writable, account.writable === true, `${where}.${account.name} writable`);
        assert.equal(signer, account.signer === true, `${where}.${account.name} signer`);
        if (account.address) assert.equal(meta.address, account.address, `${where}.${account.name} address`);
        else if (account.pda) {
          const [pda] = await findProgramAddress(PROGRAM, account.pda.seeds.map(seedBytes));
          assert.equal(meta.address, pda, `${where}.${account.name} PDA`);
        } else if (accountsByName[account.name]) assert.equal(meta.address, accountsByName[account.name], `${where}.${account.name}`);
      }
    }
    // The accounts the IDL names without seeds in closing instructions are the initiate PDAs.
    const [swapData] = await findProgramAddress(PROGRAM, [addressBytes(INITIATOR), SECRET_HASH]);
    const [swapAccount] = await findProgramAddress(PROGRAM, [new TextEncoder().encode('swap_account'), addressBytes(INITIATOR), SECRET_HASH]);
    for (const [idl, name, ix] of built.filter(([, n]) => n !== 'initiate')) {
      assert.equal(ix.accounts![idl === NATIVE_IDL ? 0 : 1]!.address, idl === NATIVE_IDL ? swapAccount : swapData, `${idl.metadata.name}.${name}`);
    }
  });

  test('localnet program keypairs are sha256(documented seed) and their ids are pinned', async () => {
    for (const name of ['native_swaps', 'spl_swaps'] as const) {
      assert.equal((await localnetProgramKeypair(name)).address, LOCALNET_PROGRAM_IDS[name]);
      assert.match(LOCALNET_PROGRAM_KEY_SEEDS[name], new RegExp(`solana_${name}$`));
    }
    assert.equal(LOCALNET_PROGRAM_IDS.native_swaps, '2JFnwHGRYz32BR9KdM9eG3DUUH5pxdACtaMSb9wKMWET');
    assert.equal(LOCALNET_PROGRAM_IDS.spl_swaps, 'HSvrBfUC75yag4tFuSsBMSGirA7wqkWR7tP2QYGAPdNp');
  });
});
