import type { Command } from 'commander';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError } from '../config/schema-check.ts';
import { keyFromFile, type ServiceConfig } from '../config/service-config.ts';
import { requireKeyPassword } from '../keys/password.ts';
import { configOf } from './database.ts';

/** A 32-byte key in hex (0x optional), as HASHLOCK_DEPLOYER_KEY holds it. */
function hexKey(value: string, name: string): Uint8Array {
  const hex = value.startsWith('0x') ? value.slice(2) : value;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(`${name}: must be a 32-byte key in hex`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** The deployer key: key_files.deployer's when the config names it (an ed25519 file's is its 32-byte seed), else HASHLOCK_DEPLOYER_KEY. */
function deployerKeyOf(config: ServiceConfig, env: NodeJS.ProcessEnv): Uint8Array {
  const file = config.keyFiles.deployer;
  if (file) return keyFromFile('deployer', file, requireKeyPassword(env, 'key_files.deployer'));
  const raw = env.HASHLOCK_DEPLOYER_KEY;
  if (!raw) {
    throw new ConfigError(
      'name the deployer key file in the config (key_files.deployer; hashlock keys new|import --role deployer), or set HASHLOCK_DEPLOYER_KEY to the deployer key (32 bytes in hex: a secp256k1 key, or a Solana ed25519 seed)',
    );
  }
  return hexKey(raw, 'HASHLOCK_DEPLOYER_KEY');
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
    .action(async (opts: { config: string; chain: string; asset?: string[]; feeSigner?: string; upgradeAuthority?: string }) => {
      const config = configOf(opts.config);
      const deployerKey = deployerKeyOf(config, process.env);
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
