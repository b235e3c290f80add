import { hexToBytes } from 'viem';
import { balanceRow, checked, clockRow, type CheckRow, type FamilyPreflight } from '../../preflight/family-preflight.ts';
import { bitcoinRpcFor } from './rpc.ts';
import { scanUtxoSet } from './utxo-scan.ts';
import { walletAddress } from './wallet-tx.ts';

/**
 * The genesis block of each network a registry may name: a node's `chain` name alone does not tell
 * Bitcoin from Litecoin (both say `main`, `test`, `regtest`).
 */
const GENESIS: Readonly<Record<string, readonly string[]>> = {
  bitcoin: ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f'],
  // testnet4 (BIP94), as Garden's bitcoin_testnet; testnet3's for operators still on it.
  bitcoin_testnet: ['00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043', '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943'],
  bitcoin_regtest: ['0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206'],
  litecoin: ['12a765e31ffd4059bada1e25190f6e98c99d9714d334efa41a195a7e7e04bfe2'],
  litecoin_testnet: ['4966625a4b2851d9fdee139e56211a0d88575f59ed816ff5e6a63deb4e3e29a0'],
  litecoin_regtest: ['530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9'],
};

/**
 * `hashlock preflight` on a Bitcoin-family chain: the node serves the registry's network (its genesis
 * block), its tip is recent, and the solver's balance (read from the node's UTXO set, which takes a scan
 * of it: only when the config sets a minimum) reaches its minimum. Its HTLCs are scripts: no code to check.
 */
export const bitcoinPreflight: FamilyPreflight = async (ctx) => {
  const { chain } = ctx;
  const scope = chain.key;
  if (!ctx.access.rpc_url) return [{ scope, check: 'node', status: 'error', detail: `the config names no rpc_url (chains.${scope}.rpc_url)` }];
  const rpc = bitcoinRpcFor({ url: ctx.access.rpc_url, cookieFile: ctx.access.rpc_cookie_file });
  const identity = await checked(scope, 'node', async () => {
    const genesis = await rpc.getBlockHash(0);
    const expected = GENESIS[chain.network] ?? [];
    return expected.includes(genesis)
      ? { scope, check: 'chain id', status: 'ok', detail: `${chain.network} (genesis ${genesis.slice(0, 16)}…)` }
      : { scope, check: 'chain id', status: 'error', detail: `the node's genesis block ${genesis} is not ${chain.network}'s` };
  });
  if (identity.some((r) => r.status === 'error')) return identity;
  const rows: CheckRow[] = [...identity];
  rows.push(
    ...(await checked(scope, 'clock', async () => {
      const tip = await rpc.call<{ time: number }>('getblockheader', [await rpc.call<string>('getbestblockhash')]);
      // A block's time may run up to two hours ahead of the network's (consensus), as regtest's often does.
      return clockRow(chain, tip.time, ctx.now, 2 * 3600);
    })),
  );
  const minimum = ctx.minimums.solver ?? ctx.minimums.inventory.get(chain.nativeAssetId);
  if (minimum !== undefined) {
    const address = ctx.keys.solver ? walletAddress(hexToBytes(ctx.keys.solver), chain.network) : undefined;
    if (!address) {
      rows.push({ scope, check: 'balance solver', status: 'error', detail: 'a minimum is set, but this instance holds no solver key to find its wallet' });
    } else {
      rows.push(
        ...(await checked(scope, 'balance solver', async () => {
          const outputs = await scanUtxoSet(rpc, [address]);
          return balanceRow(chain, 'balance solver', outputs.reduce((sum, o) => sum + o.value, 0n), minimum, 'sat');
        })),
      );
    }
  }
  return rows;
};
