import { join } from 'node:path';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { portIsFree } from '../free-port.ts';
import type { FamilyDevnet } from '../local-chain.ts';
import type { Chain } from '../../chains/registry.ts';
import { solanaSignerOfKey } from '../../chains/solana/keys.ts';
import { solanaRpc } from '../../chains/solana/rpc.ts';
import { startSolanaLocalnet, type SolanaLocalnet } from './chain/index.ts';
import { solanaProgram, SOLANA_PROGRAMS, type SolanaProgramName } from '../../chains/solana/program-artifacts.ts';
import { deployUpgradeable, holdsElf, readProgram, type LoaderAccess } from '../../chains/solana/program-deploy.ts';
import { keypairOfSeed, LOCALNET_PROGRAM_IDS, localnetProgramKeypair } from './programs/deploy.ts';

/** solana-test-validator's port, where Solana clients look for a local chain. */
const WELL_KNOWN_PORT = 8899;
const SOL = 1_000_000_000n;
/** What `hashlock dev` gives each account on a new chain, in lamports. */
const FUNDS: Record<'solver' | 'relayer' | 'user', bigint> = { solver: 1_000n * SOL, relayer: 100n * SOL, user: 100n * SOL };
/** Test tokens of each SPL asset, in whole tokens: the solver's liquidity and the user's. */
const TOKEN_FUNDS: Record<'solver' | 'user', bigint> = { solver: 1_000_000n, user: 10_000n };

/**
 * Seeds of the test mints' keypairs (private key = sha256(seed)), so a new chain's mints sit at the
 * addresses the localnet registry names. Local use only: anyone can derive these keys.
 */
export const LOCALNET_MINT_KEY_SEEDS: Readonly<Record<string, string>> = {
  usdc: 'hashlock localnet mint key v1: usdc',
  cbbtc: 'hashlock localnet mint key v1: cbbtc',
};

/**
 * The Solana chain of `hashlock dev`: LiteSVM behind Solana's JSON-RPC (`localnet/`), a slot every
 * `blockTimeMs`, its state in `<data dir>/solana`. On a new chain the HTLC programs the repository
 * ships (`contracts/artifacts/solana/`, no compiler needed), are deployed through the BPF Upgradeable Loader at the ids the
 * registry names, the test mints are created, and the solver, the relayer and the test user are
 * funded. On a restart a program whose source changed is installed afresh under its id.
 */
export const solanaDevnet: FamilyDevnet = {
  async start(chain, options) {
    if (chain.network !== 'localnet') return { unavailable: `${chain.key}: only a Solana localnet runs locally (network ${chain.network})` };
    const programs = new Map<SolanaProgramName, Uint8Array>(SOLANA_PROGRAMS.map((name) => [name, solanaProgram(name)]));
    const notes: string[] = [];
    let port = 0;
    if (options.wellKnownPorts) {
      if (await portIsFree(WELL_KNOWN_PORT)) port = WELL_KNOWN_PORT;
      else notes.push(`${chain.key}: port ${WELL_KNOWN_PORT} is taken, so the chain listens on a free port`);
    }
    // Slots always move (0 would stop the clock, and nothing would ever be confirmed).
    const slotMs = options.blockTimeMs || chain.blockTimeMs;
    const localnet = await startSolanaLocalnet({ dataDir: join(options.dataDir, 'solana'), port, slotMs });
    try {
      const signers = {
        solver: await solanaSignerOfKey(options.keys.solver),
        relayer: await solanaSignerOfKey(options.keys.relayer),
        user: await solanaSignerOfKey(options.keys.user),
      };
      const chainRpc = new DevnetRpc(localnet.rpcUrl);
      notes.push(...(await installPrograms(chain, localnet, chainRpc, programs, signers.relayer)));
      const mints = await createMints(chain, chainRpc, signers);
      for (const [role, amount] of Object.entries(FUNDS) as Array<[keyof typeof FUNDS, bigint]>) {
        if ((await chainRpc.balance(signers[role].address)) === 0n) await chainRpc.airdrop(signers[role].address, amount);
      }
      return {
        chain,
        // The relayer is the fee payer and sponsor of the gasless initiates the API hands out.
        access: { rpc_url: localnet.rpcUrl, relayer: signers.relayer.address },
        record: {
          rpc_url: localnet.rpcUrl,
          programs: { native: LOCALNET_PROGRAM_IDS.native_swaps, spl: LOCALNET_PROGRAM_IDS.spl_swaps },
          mints,
        },
        accounts: {
          user: { solana: { address: signers.user.address } },
          solver: { solana: { address: signers.solver.address } },
        },
        describe: `${localnet.rpcUrl} (LiteSVM, a slot every ${slotMs} ms)`,
        notes,
        advance: (slots) => localnet.advanceSlots(slots),
        hold: () => localnet.hold(),
        stop: () => localnet.stop(),
      };
    } catch (err) {
      await localnet.stop();
      throw err;
    }
  },
};

/**
 * Deploys each program through the Upgradeable Loader when its id holds nothing yet, by the same
 * loader steps over the chain's JSON-RPC as `hashlock deploy`, at the fixed ids the localnet registry
 * names (`LOCALNET_PROGRAM_IDS`: their keypairs come from public seeds, not from a deployer key).
 * A program deployed before from other bytes (its source changed since) is installed afresh under
 * its id.
 */
async function installPrograms(
  chain: Chain,
  localnet: SolanaLocalnet,
  chainRpc: DevnetRpc,
  programs: ReadonlyMap<SolanaProgramName, Uint8Array>,
  payer: KeyPairSigner,
): Promise<string[]> {
  const notes: string[] = [];
  if ((await chainRpc.balance(payer.address)) === 0n) await chainRpc.airdrop(payer.address, FUNDS.relayer);
  // One node without forks: what it processed stays, so waiting for a later slot would only slow the start.
  const access: LoaderAccess = { rpc: solanaRpc(localnet.rpcUrl), payer, commitment: 'processed', pollMs: 20 };
  const install = async ([name, bytes]: [SolanaProgramName, Uint8Array]): Promise<void> => {
    const id = LOCALNET_PROGRAM_IDS[name];
    const schema = name === 'native_swaps' ? 'solana:htlc' : 'solana:htlc_spltoken';
    const named = chain.assets.find((a) => a.htlc.schema === schema);
    if (named && named.htlc.address !== id) {
      throw new Error(`${chain.key}: the registry names ${named.htlc.address} for ${named.id}'s HTLC, but the local ${name} program is ${id}`);
    }
    const deployed = await readProgram(access, id);
    if (deployed.kind === 'absent') {
      const label = `${chain.key}: ${name}`;
      await deployUpgradeable(access, { label, elf: bytes, program: await localnetProgramKeypair(name), buffer: await generateKeyPairSigner(), upgradeAuthority: payer.address });
    } else if (deployed.kind === 'other') {
      throw new Error(`${chain.key}: the ${name} program id ${id} holds ${deployed.description}`);
    } else if (!holdsElf(deployed.code, bytes)) {
      localnet.svm.addProgram(id, bytes);
      notes.push(`${chain.key}: ${name} changed since it was deployed; the new build runs under ${id}`);
    }
  };
  await Promise.all([...programs].map(install));
  return notes;
}

/** The registry's SPL test tokens, created at their fixed addresses on a new chain, with the solver's and the user's tokens. */
async function createMints(chain: Chain, chainRpc: DevnetRpc, signers: Record<'solver' | 'relayer' | 'user', KeyPairSigner>): Promise<Record<string, string>> {
  const mints: Record<string, string> = {};
  for (const asset of chain.assets.filter((a) => a.token.schema === 'solana:spltoken')) {
    const seed = LOCALNET_MINT_KEY_SEEDS[asset.symbol];
    if (!seed) throw new Error(`${asset.id}: no local test mint of that symbol (${Object.keys(LOCALNET_MINT_KEY_SEEDS).join(', ')})`);
    const mint = await keypairOfSeed(seed);
    if (mint.address !== asset.token.address) throw new Error(`${asset.id}: the registry names mint ${asset.token.address}, the local test mint is ${mint.address}`);
    mints[asset.symbol] = mint.address;
    if (await chainRpc.account(mint.address)) continue;
    await chainRpc.send(signers.relayer, [
      getCreateAccountInstruction({
        payer: signers.relayer,
        newAccount: mint,
        lamports: await chainRpc.rentExempt(BigInt(getMintSize())),
        space: getMintSize(),
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: asset.decimals, mintAuthority: signers.relayer.address }),
    ]);
    for (const role of ['solver', 'user'] as const) await mintTo(chainRpc, mint.address, signers.relayer, signers[role].address, TOKEN_FUNDS[role] * 10n ** BigInt(asset.decimals));
  }
  return mints;
}

async function mintTo(chainRpc: DevnetRpc, mint: Address, authority: KeyPairSigner, owner: Address, amount: bigint): Promise<void> {
  const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  await chainRpc.send(authority, [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }),
    getMintToInstruction({ mint, token: account, mintAuthority: authority, amount }),
  ]);
}

/** The few RPC calls the devnet makes, each transaction sent and waited for until confirmed. */
class DevnetRpc {
  private readonly rpc;

  constructor(url: string) {
    this.rpc = solanaRpc(url);
  }

  async account(at: Address): Promise<Uint8Array | undefined> {
    const { value } = await this.rpc.getAccountInfo(at, { encoding: 'base64', commitment: 'processed' }).send();
    return value ? Uint8Array.from(Buffer.from(value.data[0], 'base64')) : undefined;
  }

  async balance(of: Address): Promise<bigint> {
    return (await this.rpc.getBalance(of, { commitment: 'processed' }).send()).value;
  }

  rentExempt(space: bigint): Promise<bigint> {
    return this.rpc.getMinimumBalanceForRentExemption(space).send();
  }

  async airdrop(to: Address, amount: bigint): Promise<void> {
    await this.confirmed(await this.rpc.requestAirdrop(to, lamports(amount), { commitment: 'processed' }).send());
  }

  async send(payer: KeyPairSigner, instructions: Instruction[]): Promise<void> {
    const { value: lifetime } = await this.rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    await this.sendSigned(await signTransactionMessageWithSigners(message));
  }

  private async sendSigned(transaction: Transaction): Promise<void> {
    await this.rpc.sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64', preflightCommitment: 'processed' }).send();
    await this.confirmed(getSignatureFromTransaction(transaction));
  }

  /**
   * Waits until the chain has run the transaction; throws when it failed. The local chain is one
   * node without forks, so what it processed stays: waiting for a later slot would only slow the start.
   */
  private async confirmed(signature: Parameters<typeof this.rpc.getSignatureStatuses>[0][number]): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const [status] = (await this.rpc.getSignatureStatuses([signature]).send()).value;
      if (status?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(status.err, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
      if (status) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`transaction ${signature} did not run within 10 s`);
  }
}
