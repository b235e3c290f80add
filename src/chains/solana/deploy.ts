/**
 * `hashlock deploy` on a Solana chain: the two HTLC programs the repository ships
 * (contracts/artifacts/solana/native_swaps.so for `solana:htlc` assets, spl_swaps.so for
 * `solana:htlc_spltoken`), deployed through the BPF Upgradeable Loader over standard JSON-RPC
 * (program-deploy.ts), signed by the deployer's ed25519 seed.
 *
 * Program ids. Where the registry names none, a program's id is the public key of a keypair derived
 * from the deployer key and the program's name: HMAC-SHA256(deployer seed, "hashlock solana program
 * key v1: <name>") as its ed25519 seed. So:
 * - a run repeats exactly: the same key deploys at the same ids on every run and on every cluster
 *   (devnet and mainnet ids agree), and a second run finds what the first deployed;
 * - nothing has to be kept beside the deployer key: no program keypair files to lose or leak;
 * - nobody without the deployer key can take the address before us (creating the program account
 *   needs the program key's signature), and once deployed the program key has no power left: the
 *   loader owns the account, the upgrade authority alone can change the code.
 * The buffer's keypair is derived the same way from the name and the ELF's sha256, so a run that
 * stopped halfway resumes its own buffer (only chunks that differ are written again) instead of
 * leaving rent behind in a new one each time.
 *
 * A registry id is taken as given: found when its ProgramData holds the artifact's ELF, deployed to
 * only when it is the deployer's own derived id, refused otherwise (another program there, or an id
 * only someone else's key can create). Where the registry names none but the deployment file does
 * (an earlier run, perhaps with another deployer key), a program there with the artifact's ELF is
 * taken. Every refusal comes before anything is sent.
 *
 * Upgrade authority: `--upgrade-authority`, else the deployer. The deployer deploys as authority and
 * hands it over in the same transaction. A program found with the deployer as authority is handed
 * to a named one; one whose authority is someone else (or none) while another is named is refused.
 * The deployment's `details` record each program's authority (`upgrade_authority.<program id>`).
 *
 * Chain: the node's genesis hash must be the registry network's (networks.ts); the deployment's
 * `chain_id` is that genesis hash, so a local chain started afresh is a new chain.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { address, createKeyPairSignerFromPrivateKeyBytes, type Address, type KeyPairSigner } from '@solana/kit';
import type { ChainDeployment, DeployedContract } from '../../deploy/deployment-file.ts';
import { WrongChainError, type DeployContext, type FamilyDeployer } from '../../deploy/family-deployer.ts';
import { describeNetwork, networkOfGenesis } from './networks.ts';
import { solanaProgram, solanaProgramPath, type SolanaProgramName } from './program-artifacts.ts';
import { deploymentCost, deployUpgradeable, holdsElf, readProgram, setUpgradeAuthority, type LoaderAccess } from './program-deploy.ts';
import { programDataAddress } from './loader-v3.ts';
import { solanaRpc } from './rpc.ts';

const PROGRAM_OF_SCHEMA: Readonly<Record<string, SolanaProgramName>> = { 'solana:htlc': 'native_swaps', 'solana:htlc_spltoken': 'spl_swaps' };

const derivedSigner = (deployerKey: Uint8Array, purpose: string): Promise<KeyPairSigner> =>
  createKeyPairSignerFromPrivateKeyBytes(hmac(sha256, deployerKey, new TextEncoder().encode(`hashlock solana ${purpose}`)));

/** The keypair whose public key is the deployer's program id for `name`. */
export const deployerProgramSigner = (deployerKey: Uint8Array, name: SolanaProgramName): Promise<KeyPairSigner> => derivedSigner(deployerKey, `program key v1: ${name}`);

/** The buffer keypair of one ELF of `name`: the same on every run, so an interrupted one resumes. */
const bufferSigner = (deployerKey: Uint8Array, name: SolanaProgramName, codeHash: string): Promise<KeyPairSigner> =>
  derivedSigner(deployerKey, `buffer key v1: ${name}: ${codeHash}`);

const hexSha256 = (bytes: Uint8Array): string => Buffer.from(sha256(bytes)).toString('hex');

/** One program to have on chain, and what this run does about it. */
interface Planned {
  name: SolanaProgramName;
  elf: Uint8Array;
  codeHash: string;
  programId: Address;
  assets: string[];
  label: string;
  /** Set when this run deploys it (the derived id). */
  deployAs?: KeyPairSigner;
  /** The authority it has (found) or will have (deployed); null: immutable. */
  authority: Address | null;
  /** A found program whose authority the deployer hands to `--upgrade-authority`. */
  handTo?: Address;
}

export const solanaDeployer: FamilyDeployer = async (ctx) => {
  const { chain } = ctx;
  if (!ctx.access.rpc_url) throw new Error(`${chain.key}: the config names no rpc_url (chains.${chain.key}.rpc_url)`);
  const rpc = solanaRpc(ctx.access.rpc_url);
  const genesisHash = await rpc.getGenesisHash().send();
  const served = networkOfGenesis(genesisHash);
  if (served !== chain.network) throw new WrongChainError(chain.key, describeNetwork(chain.network), describeNetwork(served, genesisHash));
  if (ctx.deployerKey.length !== 32) throw new Error(`${chain.key}: the deployer key (HASHLOCK_DEPLOYER_KEY) must be a 32-byte ed25519 seed on Solana, not ${ctx.deployerKey.length} bytes`);
  const payer = await createKeyPairSignerFromPrivateKeyBytes(ctx.deployerKey);
  const access: LoaderAccess = { rpc, payer, commitment: 'confirmed', log: ctx.log };
  const named = namedAuthority(ctx.options.upgradeAuthority);
  const previous = ctx.previous?.chain_id === genesisHash ? ctx.previous : undefined;
  if (ctx.previous && !previous) ctx.log(`${chain.key}: the deployment file records another chain (genesis ${ctx.previous.chain_id}); its programs are not looked for`);

  const plan = await planPrograms(ctx, access, previous, named ?? payer.address, named !== undefined);
  const deploying = plan.filter((p) => p.deployAs);
  if (deploying.length > 0) {
    const needed = (await Promise.all(deploying.map((p) => deploymentCost(access, p.elf.length)))).reduce((a, b) => a + b, 0n);
    const { value: balance } = await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send();
    if (balance < needed) {
      throw new Error(`${chain.key}: the deployer ${payer.address} holds ${balance} lamports; deploying ${deploying.map((p) => p.name).join(' and ')} needs about ${needed} (rent and fees); nothing was deployed`);
    }
  }

  const transactions = new Map<Address, string>();
  const outcomes = await Promise.allSettled(
    deploying.map(async (p) => {
      const buffer = await bufferSigner(ctx.deployerKey, p.name, p.codeHash);
      const signature = await deployUpgradeable(access, { label: p.label, elf: p.elf, program: p.deployAs!, buffer, upgradeAuthority: p.authority! });
      transactions.set(p.programId, signature);
      ctx.log(`${p.label}: deployed at ${p.programId} in ${signature}`);
    }),
  );
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
  for (const p of plan.filter((q) => q.handTo)) {
    await setUpgradeAuthority(access, p.label, await programDataAddress(p.programId), p.handTo!);
    p.authority = p.handTo!;
  }

  const contracts: DeployedContract[] = [];
  const details: Record<string, string> = { ...(previous?.details ?? {}), network: chain.network };
  for (const p of plan) {
    const onChain = await readProgram(access, p.programId);
    if (onChain.kind !== 'upgradeable' || !holdsElf(onChain.code, p.elf) || onChain.authority !== p.authority) {
      throw new Error(`${p.label}: ${p.programId} does not hold the artifact with upgrade authority ${p.authority ?? 'none'} after this run`);
    }
    const transaction = transactions.get(p.programId);
    contracts.push({ contract: p.name, address: p.programId, assets: p.assets, code_hash: p.codeHash, ...(transaction ? { transaction } : {}) });
    details[`upgrade_authority.${p.programId}`] = p.authority ?? 'none';
  }
  const deployment: ChainDeployment = { chain_id: genesisHash, deployer: payer.address, contracts, details, updated_at: new Date().toISOString() };
  return deployment;
};

function namedAuthority(value: string | undefined): Address | undefined {
  if (value === undefined) return undefined;
  try {
    return address(value);
  } catch {
    throw new Error(`--upgrade-authority: ${JSON.stringify(value)} is not a base58 Solana address`);
  }
}

/**
 * Each asset's program id (the registry's, else the deployment file's if it holds the artifact, else
 * the deployer's derived one), grouped per program; what is there decides found, deploy or refuse.
 */
async function planPrograms(ctx: DeployContext, access: LoaderAccess, previous: ChainDeployment | undefined, authority: Address, authorityNamed: boolean): Promise<Planned[]> {
  const groups = new Map<string, { name: SolanaProgramName; programId: Address; registered: boolean; assets: string[] }>();
  const elves = new Map<SolanaProgramName, Uint8Array>();
  const elfOf = (name: SolanaProgramName): Uint8Array => elves.get(name) ?? elves.set(name, solanaProgram(name)).get(name)!;
  for (const asset of ctx.assets) {
    const name = PROGRAM_OF_SCHEMA[asset.htlc.schema];
    if (!name) continue;
    let programId: Address;
    if (asset.htlc.address !== '') {
      try {
        programId = address(asset.htlc.address);
      } catch {
        throw new Error(`${asset.id}: htlc.address ${asset.htlc.address} is not a base58 Solana address`);
      }
    } else {
      const recorded = previous?.contracts.find((c) => c.contract === name && c.assets.includes(asset.id))?.address;
      const found = recorded ? await readProgram(access, address(recorded)) : undefined;
      programId = found?.kind === 'upgradeable' && holdsElf(found.code, elfOf(name)) ? address(recorded!) : (await deployerProgramSigner(ctx.deployerKey, name)).address;
    }
    const key = `${name} ${programId}`;
    const group = groups.get(key) ?? { name, programId, registered: false, assets: [] };
    group.registered ||= asset.htlc.address !== '';
    group.assets.push(asset.id);
    groups.set(key, group);
  }

  const plan: Planned[] = [];
  for (const { name, programId, registered, assets } of groups.values()) {
    const elf = elfOf(name);
    const label = `${name} of ${assets.join(', ')}`;
    const where = registered ? `the registry's htlc.address ${programId}` : programId;
    const base = { name, elf, codeHash: hexSha256(elf), programId, assets, label };
    const onChain = await readProgram(access, programId);
    if (onChain.kind === 'other') throw new Error(`${label}: ${where} holds ${onChain.description}, not an upgradeable program; nothing was deployed`);
    if (onChain.kind === 'upgradeable') {
      if (!holdsElf(onChain.code, elf)) {
        throw new Error(`${label}: ${where} holds another program than ${solanaProgramPath(name)} (sha256 ${base.codeHash}); hashlock deploy does not upgrade programs; nothing was deployed`);
      }
      ctx.log(`${label}: found at ${programId}`);
      if (!authorityNamed || onChain.authority === authority) {
        plan.push({ ...base, authority: onChain.authority });
      } else if (onChain.authority === access.payer.address) {
        plan.push({ ...base, authority: onChain.authority, handTo: authority });
      } else {
        throw new Error(`${label}: ${programId}'s upgrade authority is ${onChain.authority ?? 'none (immutable)'}, not ${authority} as --upgrade-authority names, and the deployer cannot change it; nothing was deployed`);
      }
      continue;
    }
    const own = await deployerProgramSigner(ctx.deployerKey, name);
    if (own.address !== programId) {
      throw new Error(
        `${label}: ${where} holds no program, and the deployer can deploy ${name} only at its own program id ${own.address} (derived from its key): ` +
          `empty htlc.address of ${assets.join(', ')} to deploy there, or deploy with the key that derives ${programId}; nothing was deployed`,
      );
    }
    plan.push({ ...base, deployAs: own, authority });
  }
  return plan;
}
