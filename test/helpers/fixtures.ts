import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { loadRegistry, type Registry } from '../../src/chains/registry.ts';
import { PACKAGE_ROOT, type SolverConfig, type StrategyConfig } from '../../src/config/service-config.ts';
import { createApp } from '../../src/store/apps.ts';
import type { Db } from '../../src/store/database.ts';
import type { NewOrder } from '../../src/store/orders.ts';
import { syncRegistry } from '../../src/store/registry-sync.ts';
import { syncSolvers } from '../../src/store/solvers.ts';

export const LOCALNET_REGISTRY_PATH = resolve(PACKAGE_ROOT, 'config/registry.localnet.json');
export const MAINNET_REGISTRY_PATH = resolve(PACKAGE_ROOT, 'config/registry.mainnet.json');

export const SOLVER: SolverConfig = {
  id: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  name: 'test solver',
  addresses: {
    ethereum_localnet: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    arbitrum_localnet: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    // x-only key of anvil's second dev account key, the devnet solver's Bitcoin-family identity
    litecoin_localnet: 'ba5734d8f7091719471e7f7ed6b9df170dc70cc661ca05e688601ad984f068b0',
  },
};

const WBTC = ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc'];
const USDC = ['ethereum_localnet:usdc', 'arbitrum_localnet:usdc'];
const ETH = ['ethereum_localnet:eth', 'arbitrum_localnet:eth'];

/** The test solver's pairs: like-for-like across the two EVM chains, BTC/ETH <-> USD, and LTC <-> WBTC. */
export const TEST_STRATEGIES: StrategyConfig[] = [
  { solver: SOLVER.id, from: WBTC, to: WBTC, fee_bips: 30 },
  { solver: SOLVER.id, from: USDC, to: USDC, fee_bips: 10 },
  { solver: SOLVER.id, from: ETH, to: ETH, fee_bips: 30 },
  { solver: SOLVER.id, from: [...WBTC, ...ETH], to: USDC, fee_bips: 30, spread_bips: 10 },
  { solver: SOLVER.id, from: 'litecoin_localnet:ltc', to: WBTC, fee_bips: 30 },
  { solver: SOLVER.id, from: WBTC, to: 'litecoin_localnet:ltc', fee_bips: 30 },
];

export const USER = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';

export function localnetRegistry(): Registry {
  return loadRegistry(LOCALNET_REGISTRY_PATH);
}

export const randomHex32 = (): string => randomBytes(32).toString('hex');

/** Registry, the test solver and one app: what every order needs to exist. */
export async function seedBasics(db: Db, registry = localnetRegistry()) {
  await syncRegistry(db, registry);
  const addresses = Object.fromEntries(Object.entries(SOLVER.addresses).filter(([chain]) => registry.chain(chain)));
  await syncSolvers(db, [{ ...SOLVER, addresses }]);
  const { app, key } = await createApp(db, { name: 'test app', gasless: true });
  return { registry, app, key };
}

/** A WBTC order from ethereum_localnet to arbitrum_localnet. */
export function sampleOrder(appId: string, overrides: Partial<NewOrder> = {}): NewOrder {
  const secretHash = randomHex32();
  return {
    id: randomHex32(),
    appId,
    nonce: randomHex32().slice(0, 16),
    solverId: SOLVER.id,
    integrator: 'test app',
    version: 'v2',
    slippage: 50,
    secretHash,
    deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
    source: {
      swapId: randomHex32(),
      chain: 'ethereum_localnet',
      asset: 'ethereum_localnet:wbtc',
      initiator: USER,
      redeemer: SOLVER.addresses.ethereum_localnet!,
      timelock: 600n,
      amount: 100000n,
      assetPrice: 95000,
      requiredConfirmations: 1,
    },
    destination: {
      swapId: randomHex32(),
      chain: 'arbitrum_localnet',
      asset: 'arbitrum_localnet:wbtc',
      initiator: SOLVER.addresses.arbitrum_localnet!,
      redeemer: USER,
      timelock: 150n,
      amount: 99700n,
      assetPrice: 95000,
      requiredConfirmations: 1,
    },
    affiliateFees: [],
    quote: { feeBips: 30, fixedFee: '0', estimatedTime: 30 },
    ...overrides,
  };
}
