import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { checkSchema, ConfigError } from '../config/schema-check.ts';
import type { RegistryFile } from '../chains/registry-schema.ts';

const DeployedContractSchema = Type.Object(
  {
    /** The artifact: HTLC, NativeHTLC, FeeClaim, TronHTLC, native_swaps, spl_swaps. */
    contract: Type.String({ minLength: 1 }),
    address: Type.String({ minLength: 1 }),
    /** The registry assets (`<chain>:<symbol>`) whose HTLC this is; empty for FeeClaim. */
    assets: Type.Array(Type.String({ minLength: 1 })),
    /** The artifact's code hash, as the chain's code was checked against. */
    code_hash: Type.String({ minLength: 1 }),
    /** The transaction that created it, when a run of `hashlock deploy` did. */
    transaction: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const ChainDeploymentSchema = Type.Object(
  {
    /** The chain the node served when deployed (the registry's id, e.g. `evm:11155111`, or a genesis hash). */
    chain_id: Type.String({ minLength: 1 }),
    deployer: Type.String({ minLength: 1 }),
    contracts: Type.Array(DeployedContractSchema),
    /** Family details (a Solana program's upgrade authority). */
    details: Type.Optional(Type.Record(Type.String(), Type.String())),
    updated_at: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

const DeploymentFileSchema = Type.Object(
  { chains: Type.Record(Type.String(), ChainDeploymentSchema) },
  { additionalProperties: false },
);

export type DeployedContract = Static<typeof DeployedContractSchema>;
export type ChainDeployment = Static<typeof ChainDeploymentSchema>;
export type DeploymentFile = Static<typeof DeploymentFileSchema>;

/** The deployment file of a registry: beside it, `registry.testnet.json` -> `registry.testnet.deployment.json`. */
export function deploymentPath(registryPath: string): string {
  const name = basename(registryPath).replace(/\.json$/i, '');
  return join(dirname(registryPath), `${name}.deployment.json`);
}

/** The deployment file of a registry, or an empty one when there is none yet. */
export function readDeployment(registryPath: string): DeploymentFile {
  const path = deploymentPath(registryPath);
  if (!existsSync(path)) return { chains: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${path}: cannot read the deployment file: ${(err as Error).message}`);
  }
  return checkSchema(DeploymentFileSchema, raw, path);
}

/**
 * Replaces one chain's entry, written whole to a temporary file and renamed over the old one, under a
 * lock file beside it: `hashlock deploy` run for two chains at once must not lose one's entry.
 */
export async function writeChainDeployment(registryPath: string, chainKey: string, deployment: ChainDeployment): Promise<string> {
  const path = deploymentPath(registryPath);
  await withLockFile(`${path}.lock`, () => {
    const file = readDeployment(registryPath);
    file.chains[chainKey] = deployment;
    const sorted: DeploymentFile = { chains: Object.fromEntries(Object.entries(file.chains).sort(([a], [b]) => a.localeCompare(b))) };
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(sorted, null, 2)}\n`);
    renameSync(temporary, path);
  });
  return path;
}

/** A lock older than this was left by a process that died holding it. */
const STALE_LOCK_MS = 120_000;

async function withLockFile(lock: string, work: () => void): Promise<void> {
  for (const start = Date.now(); ; await new Promise((r) => setTimeout(r, 50))) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lock, { force: true });
      else if (Date.now() - start > STALE_LOCK_MS) throw new Error(`${lock}: another hashlock deploy holds it; remove it if none runs`, { cause: err });
    }
  }
  try {
    work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/**
 * The registry with the deployment's addresses in place of its empty HTLC addresses, and each chain's
 * FeeClaim. A registry address the deployment contradicts is a configuration error: which of the two
 * holds the client's funds must never be a guess.
 */
export function withDeployment(registry: RegistryFile, deployment: DeploymentFile, where: string): RegistryFile {
  return {
    ...registry,
    chains: registry.chains.map((chain) => {
      const deployed = deployment.chains[chain.chain];
      if (!deployed) return chain;
      const feeClaim = deployed.contracts.find((c) => c.contract === 'FeeClaim')?.address;
      return {
        ...chain,
        ...(feeClaim ? { fee_claim: feeClaim } : {}),
        assets: chain.assets.map((asset) => {
          const id = `${chain.chain}:${asset.symbol}`;
          const htlc = deployed.contracts.find((c) => c.assets.includes(id));
          if (!htlc) return asset;
          if (asset.htlc.address !== '' && asset.htlc.address.toLowerCase() !== htlc.address.toLowerCase()) {
            throw new ConfigError(`${where}: ${id}'s HTLC is ${htlc.address} there, the registry names ${asset.htlc.address}: empty the registry's address or deploy again`);
          }
          return { ...asset, htlc: { ...asset.htlc, address: htlc.address } };
        }),
      };
    }),
  };
}
