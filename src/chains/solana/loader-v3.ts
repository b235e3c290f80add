/**
 * The BPF Upgradeable Loader (loader-v3): the few instructions a deployment sends and the account
 * states it reads, encoded with @solana/kit's codecs as the loader's bincode layouts are.
 * `@solana-program/loader-v3` (0.3.0, the only release) would generate these, but it asks for
 * @solana/kit ^6 and does not install beside the project's 8.4.
 */
import {
  AccountRole,
  address,
  addEncoderSizePrefix,
  getAddressDecoder,
  getAddressEncoder,
  getBytesEncoder,
  getNullableDecoder,
  getProgramDerivedAddress,
  getStructDecoder,
  getStructEncoder,
  getU32Decoder,
  getU32Encoder,
  getU64Decoder,
  getU64Encoder,
  getU8Decoder,
  type Address,
  type Instruction,
  type ReadonlyUint8Array,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';

export const LOADER_V3_ADDRESS = address('BPFLoaderUpgradeab1e11111111111111111111111');
const SYSVAR_RENT_ADDRESS = address('SysvarRent111111111111111111111111111111111');
const SYSVAR_CLOCK_ADDRESS = address('SysvarC1ock11111111111111111111111111111111');

/** UpgradeableLoaderState sizes: Buffer { authority }, Program { programdata }, ProgramData { slot, authority }. */
export const BUFFER_HEADER_BYTES = 37;
export const PROGRAM_ACCOUNT_BYTES = 36;
export const PROGRAM_DATA_HEADER_BYTES = 45;

/** The UpgradeableLoaderState variants, the u32 each account's data starts with. */
export const LoaderState = { uninitialized: 0, buffer: 1, program: 2, programData: 3 } as const;

/** The program's ProgramData account: the loader's PDA of [program id]. */
export async function programDataAddress(programId: Address): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({ programAddress: LOADER_V3_ADDRESS, seeds: [getAddressEncoder().encode(programId)] });
  return pda;
}

const variantOnly = (variant: number) => getStructEncoder([['variant', getU32Encoder()]]).encode({ variant });
const writeData = getStructEncoder([
  ['variant', getU32Encoder()],
  ['offset', getU32Encoder()],
  ['bytes', addEncoderSizePrefix(getBytesEncoder(), getU64Encoder())],
]);
const deployData = getStructEncoder([
  ['variant', getU32Encoder()],
  ['maxDataLen', getU64Encoder()],
]);

/** InitializeBuffer: the buffer (created by the System program, owned by the loader) gets its authority. */
export function initializeBufferInstruction(buffer: Address, authority: Address): Instruction {
  return {
    programAddress: LOADER_V3_ADDRESS,
    accounts: [
      { address: buffer, role: AccountRole.WRITABLE },
      { address: authority, role: AccountRole.READONLY },
    ],
    data: variantOnly(0),
  };
}

/** Write: `bytes` into the buffer at `offset` of the program (after the buffer's header); the buffer's authority signs. */
export function writeInstruction(buffer: Address, authority: Address, offset: number, bytes: ReadonlyUint8Array): Instruction {
  return {
    programAddress: LOADER_V3_ADDRESS,
    accounts: [
      { address: buffer, role: AccountRole.WRITABLE },
      { address: authority, role: AccountRole.READONLY_SIGNER },
    ],
    data: writeData.encode({ variant: 1, offset, bytes }),
  };
}

/**
 * DeployWithMaxDataLen: the program account (created just before, owned by the loader) becomes the
 * program, its ProgramData is created and paid by `payer`, the buffer's bytes move there and the
 * buffer is closed to the payer. The buffer's authority signs and becomes the upgrade authority.
 */
export function deployWithMaxDataLenInstruction(input: {
  payer: Address;
  programData: Address;
  program: Address;
  buffer: Address;
  authority: Address;
  maxDataLen: bigint;
}): Instruction {
  return {
    programAddress: LOADER_V3_ADDRESS,
    accounts: [
      { address: input.payer, role: AccountRole.WRITABLE_SIGNER },
      { address: input.programData, role: AccountRole.WRITABLE },
      { address: input.program, role: AccountRole.WRITABLE },
      { address: input.buffer, role: AccountRole.WRITABLE },
      { address: SYSVAR_RENT_ADDRESS, role: AccountRole.READONLY },
      { address: SYSVAR_CLOCK_ADDRESS, role: AccountRole.READONLY },
      { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
      { address: input.authority, role: AccountRole.READONLY_SIGNER },
    ],
    data: deployData.encode({ variant: 2, maxDataLen: input.maxDataLen }),
  };
}

/**
 * SetAuthority of a ProgramData (or buffer) account: the current authority signs; the new one need
 * not (SetAuthorityChecked would make it), so a multisig or cold key can be named.
 */
export function setAuthorityInstruction(account: Address, currentAuthority: Address, newAuthority: Address): Instruction {
  return {
    programAddress: LOADER_V3_ADDRESS,
    accounts: [
      { address: account, role: AccountRole.WRITABLE },
      { address: currentAuthority, role: AccountRole.READONLY_SIGNER },
      { address: newAuthority, role: AccountRole.READONLY },
    ],
    data: variantOnly(4),
  };
}

// bincode's Option<Pubkey>: a u8 tag, then the key; the loader leaves a None's 32 bytes zero.
const optionalAuthority = getNullableDecoder(getAddressDecoder(), { prefix: getU8Decoder(), noneValue: 'zeroes' });
const bufferHeader = getStructDecoder([
  ['variant', getU32Decoder()],
  ['authority', optionalAuthority],
]);
const programAccount = getStructDecoder([
  ['variant', getU32Decoder()],
  ['programData', getAddressDecoder()],
]);
const programDataHeader = getStructDecoder([
  ['variant', getU32Decoder()],
  ['slot', getU64Decoder()],
  ['authority', optionalAuthority],
]);

/** A Buffer account's authority, or undefined when `data` is not a buffer. */
export function decodeBuffer(data: ReadonlyUint8Array): { authority: Address | null } | undefined {
  if (data.length < BUFFER_HEADER_BYTES) return undefined;
  const header = bufferHeader.decode(data);
  return header.variant === LoaderState.buffer ? { authority: header.authority } : undefined;
}

/** A Program account's ProgramData address, or undefined when `data` is not a program account. */
export function decodeProgramAccount(data: ReadonlyUint8Array): { programData: Address } | undefined {
  if (data.length < PROGRAM_ACCOUNT_BYTES) return undefined;
  const state = programAccount.decode(data);
  return state.variant === LoaderState.program ? { programData: state.programData } : undefined;
}

/** A ProgramData account: the slot it was last deployed in, its upgrade authority (null: immutable) and the program bytes (padded to its max length). */
export function decodeProgramData(data: ReadonlyUint8Array): { slot: bigint; authority: Address | null; code: ReadonlyUint8Array } | undefined {
  if (data.length < PROGRAM_DATA_HEADER_BYTES) return undefined;
  const header = programDataHeader.decode(data);
  if (header.variant !== LoaderState.programData) return undefined;
  return { slot: header.slot, authority: header.authority, code: data.subarray(PROGRAM_DATA_HEADER_BYTES) };
}
