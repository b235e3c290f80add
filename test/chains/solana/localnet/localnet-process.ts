// A localnet in a process of its own, for the test that kills it with SIGKILL:
// node --import tsx localnet-process.ts <dataDir> [slotMs]. Prints {"rpcUrl": ...} once listening.
import { startSolanaLocalnet } from '../../../../src/localnet/solana/chain/index.ts';

const [dataDir, slotMs] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: localnet-process.ts <dataDir> [slotMs]');
const chain = await startSolanaLocalnet({ dataDir, slotMs: slotMs === undefined ? 400 : Number(slotMs) });
console.log(JSON.stringify({ rpcUrl: chain.rpcUrl }));
process.on('SIGTERM', () => void chain.stop().then(() => process.exit(0)));
