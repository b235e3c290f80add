import { resolve } from 'node:path';
import type { Command } from 'commander';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError } from '../config/schema-check.ts';
import { keyFromFile, type ServiceConfig } from '../config/service-config.ts';
import { requireKeyPassword } from '../keys/password.ts';
import { KeyFileError, readKeyFileInfo, type KeyCurve } from '../keys/key-file.ts';
import { loadRegistry } from '../chains/registry.ts';
import { configOf } from './database.ts';

/** A 32-byte key in hex (0x optional), as HASHLOCK_DEPLOYER_KEY holds it. */
function hexKey(value: string, name: string): Uint8Array {
  const hex = value.startsWith('0x') ? value.slice(2) : value;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(`${name}: must be a 32-byte key in hex`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** The curve a family's deployer signs with: Solana's programs are deployed with an ed25519 key. */
const DEPLOYER_CURVE: Readonly<Record<string, KeyCurve>> = { evm: 'secp256k1', tron: 'secp256k1', solana: 'ed25519' };

/**
 * The deployer key: `--key-file`'s, else key_files.deployer's (an ed25519 file's is its 32-byte seed),
 * else HASHLOCK_DEPLOYER_KEY. A key file of another curve than the chain's family signs with is refused:
 * it would deploy from an address no `hashlock keys list` shows.
 */
function deployerKeyOf(config: ServiceConfig, env: NodeJS.ProcessEnv, family: string, keyFile: string | undefined): Uint8Array {
  const file = keyFile ? resolve(keyFile) : config.keyFiles.deployer;
  const where = keyFile ? '--key-file' : 'key_files.deployer';
  if (file) {
    const curve = readKeyFileInfoOrConfigError(file, where).curve;
    const wanted = DEPLOYER_CURVE[family];
    if (curve && wanted && curve !== wanted) {
      throw new ConfigError(`${where}: ${file} holds a ${curve} key; ${family} chains are deployed with a ${wanted} key (hashlock keys new --role deployer --curve ${wanted}, passed as --key-file)`);
    }
    return keyFromFile('deployer', file, requireKeyPassword(env, where), where);
  }
  const raw = env.HASHLOCK_DEPLOYER_KEY;
  if (!raw) {
    throw new ConfigError(
      'name the deployer key file (--key-file, or key_files.deployer in the config; hashlock keys new|import --role deployer), or set HASHLOCK_DEPLOYER_KEY to the deployer key (32 bytes in hex: a secp256k1 key, or a Solana ed25519 seed)',
    );
  }
  return hexKey(raw, 'HASHLOCK_DEPLOYER_KEY');
}

function readKeyFileInfoOrConfigError(file: string, where: string) {
  try {
    return readKeyFileInfo(file);
  } catch (err) {
    if (err instanceof KeyFileError) throw new ConfigError(`${where}: ${err.message}`);
    throw err;
  }
}

export function registerDeployCommand(program: Command): void {
  program
    .command('deploy')
    .description(
      "deploy a chain's HTLC contracts (EVM: each ERC-20 asset's HTLC, the NativeHTLC and FeeClaim; Tron: each TRC-20 asset's HTLC; " +
        'Solana: the two programs) through its RPC, signed by the deployer key (key_files.deployer, else HASHLOCK_DEPLOYER_KEY); what is on chain goes to the ' +
        'deployment file beside the registry, which the service reads. Run again, it finds each contract by its code hash and deploys nothing',
    )
    .requiredOption('-c, --config <file>', 'service config file (its registry, and chains.<key> to reach the chain)')
    .requiredOption('--chain <key>', 'the registry chain to deploy to')
    .option('--asset <id...>', 'only the HTLCs of these assets (<chain>:<symbol>); default: every asset of the chain, and FeeClaim')
    .option('--fee-signer <address>', "EVM: the address FeeClaim names as its signer (default: HASHLOCK_FEE_SIGNER_KEY's)")
    .option('--upgrade-authority <address>', "Solana: the programs' upgrade authority (default: the deployer)")
    .option('--key-file <file>', 'the deployer key file (default: key_files.deployer): a secp256k1 key for EVM and Tron chains, an ed25519 one for Solana')
    .action(async (opts: { config: string; chain: string; asset?: string[]; feeSigner?: string; upgradeAuthority?: string; keyFile?: string }) => {
      const config = configOf(opts.config);
      const family = loadRegistry(config.registryPath, { undeployed: true }).chain(opts.chain)?.family ?? '';
      const deployerKey = deployerKeyOf(config, process.env, family, opts.keyFile);
      const feeSigner = opts.feeSigner ?? (config.keys.feeSigner ? privateKeyToAccount(config.keys.feeSigner).address : undefined);
      const { deployChain } = await import('../deploy/deploy.ts');
      const outcome = await deployChain({
        config,
        chainKey: opts.chain,
        assetIds: opts.asset ?? [],
        deployerKey,
        options: { ...(feeSigner ? { feeSigner } : {}), ...(opts.upgradeAuthority ? { upgradeAuthority: opts.upgradeAuthority } : {}) },
        log: (line) => console.log(line),
      });
      const found = outcome.deployment.contracts.length - outcome.created;
      console.log(`${opts.chain}: ${outcome.created} deployed, ${found} found on chain; written to ${outcome.path}`);
    });
}
