/**
 * The create-order response's Solana signing data (versioned_tx, versioned_tx_gasless), signed as a
 * wallet and the relayer would sign it, runs against the project's programs in LiteSVM.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { generateKeyPairSigner, getTransactionDecoder, signTransaction, type Address, type KeyPairSigner } from '@solana/kit';
import { solanaSigningData } from '../../../../src/chains/solana/index.ts';
import { decodeSwapEvents } from '../../../../src/chains/solana/events.ts';
import { findProgramAddress } from '../../../../src/chains/solana/pda.ts';
import { swapAccountSeeds } from '../../../../src/chains/solana/program.ts';
import { decodeNativeSwapAccount, decodeSplSwapAccount, SPL_SWAP_ACCOUNT_WITH_MINT_BYTES } from '../../../../src/chains/solana/swap-account.ts';
import type { Asset } from '../../../../src/chains/registry.ts';
import { solanaProgramsForSuite } from '../../../helpers/solana.ts';
import { SOL, terms, USDC } from '../fixtures.ts';
import { FEE_PER_SIGNATURE, World } from './svm.ts';

const built = await solanaProgramsForSuite();

describe('signing data from the API runs against the programs', () => {
  let world: World;
  before(async () => {
    world = await World.create(built);
  });

  const secretHashOf = (secret: Uint8Array): string => createHash('sha256').update(secret).digest('hex');
  const localAsset = (asset: Asset, program: Address, token?: Address): Asset => ({
    ...asset,
    htlc: { ...asset.htlc, address: program },
    token: token ? { ...asset.token, address: token } : asset.token,
  });

  async function sendSigned(base64: string, signers: KeyPairSigner[]) {
    const unsigned = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
    const transaction = await signTransaction(signers.map((s) => s.keyPair), unsigned);
    const result = world.svm.sendTransaction(transaction);
    assert.ok(!('err' in result), 'err' in result ? `${result.toString()}\n${result.meta().logs().join('\n')}` : '');
    return result.logs();
  }

  test('native versioned_tx: the user signs alone and the swap opens with the order terms', async () => {
    const initiator = await world.funded();
    const redeemer = await generateKeyPairSigner();
    const secretHash = secretHashOf(randomBytes(32));
    const orderTerms = terms(localAsset(SOL, world.programs.native_swaps), { initiator: initiator.address, redeemer: redeemer.address, amount: 123_456_789n, timelock: 432n, secretHash });
    world.svm.expireBlockhash();
    const data = await solanaSigningData(orderTerms, { gasless: false, recentBlockhash: world.svm.latestBlockhash() });
    assert.equal(data.versioned_tx_gasless, null);
    const logs = await sendSigned(data.versioned_tx, [initiator]);
    const [swapAccount] = await findProgramAddress(world.programs.native_swaps, swapAccountSeeds('native', initiator.address, Buffer.from(secretHash, 'hex')));
    const swap = decodeNativeSwapAccount(world.data(swapAccount));
    assert.equal(swap.amountLamports, 123_456_789n);
    assert.equal(swap.redeemer, redeemer.address);
    assert.equal(Buffer.from(swap.secretHash).toString('hex'), secretHash);
    assert.equal(decodeSwapEvents('native', world.programs.native_swaps, logs)[0]?.name, 'Initiated');
  });

  test('SPL versioned_tx_gasless: the relayer pays fees and rent, the user signs for the tokens', async () => {
    const { mint } = await world.createMint();
    const initiator = await generateKeyPairSigner(); // no SOL at all
    const relayer = await world.funded();
    const redeemer = await generateKeyPairSigner();
    const initiatorTokens = await world.tokenAccount(initiator.address, mint, 5_000_000n);
    const secretHash = secretHashOf(randomBytes(32));
    const orderTerms = terms(localAsset(USDC, world.programs.spl_swaps, mint), { initiator: initiator.address, redeemer: redeemer.address, amount: 5_000_000n, timelock: 600n, secretHash });
    world.svm.expireBlockhash();
    const data = await solanaSigningData(orderTerms, { gasless: true, relayer: relayer.address, recentBlockhash: world.svm.latestBlockhash() });
    assert.ok(data.versioned_tx_gasless);
    const relayerBefore = world.balance(relayer.address);
    const logs = await sendSigned(data.versioned_tx_gasless, [relayer, initiator]);
    assert.equal(world.tokenBalance(initiatorTokens), 0n);
    assert.equal(world.balance(initiator.address), 0n);
    // The first SPL swap of this world: the relayer pays for the identity PDA and the mint's vault too.
    const rent = world.rent(BigInt(SPL_SWAP_ACCOUNT_WITH_MINT_BYTES)) + world.rent(165n) + world.rent(0n);
    assert.equal(world.balance(relayer.address), relayerBefore - 2n * FEE_PER_SIGNATURE - rent);
    const [swapData] = await findProgramAddress(world.programs.spl_swaps, swapAccountSeeds('spl', initiator.address, Buffer.from(secretHash, 'hex')));
    const swap = decodeSplSwapAccount(world.data(swapData));
    assert.deepEqual([swap.swapAmount, swap.expirySlot, swap.sponsor, swap.mint], [5_000_000n, world.slot() + 600n, relayer.address, mint]);
    assert.equal(decodeSwapEvents('spl', world.programs.spl_swaps, logs)[0]?.name, 'Initiated');
  });
});
