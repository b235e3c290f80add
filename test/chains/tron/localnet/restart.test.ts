// The local Tron chain keeps its state in the data directory: after a stop and a start, its blocks,
// balances, contracts and transactions are there, and an old transaction is still a duplicate.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { devAccount } from '../../../../src/localnet/accounts.ts';
import { startTronTestChain, tronAddressOf } from '../../../helpers/tron-localnet.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-tron-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('blocks, balances, contracts and transactions survive a restart; a resent transaction is still a duplicate', async () => {
  const first = await startTronTestChain({ dataDir });
  let signed: { txID: string };
  let head: number;
  let balance: number;
  try {
    const user = first.tronWeb('user');
    const built = await user.transactionBuilder.triggerSmartContract(first.deployment.usdt, 'transfer(address,uint256)', { feeLimit: 100_000_000 }, [{ type: 'address', value: tronAddressOf('solver') }, { type: 'uint256', value: 1234 }], tronAddressOf('user'));
    signed = await user.trx.sign(built.transaction);
    assert.equal((await user.trx.sendRawTransaction(signed as never)).result, true);
    await first.localnet.mine(2);
    head = await first.localnet.chain.headNumber();
    balance = await user.trx.getBalance(tronAddressOf('user'));
  } finally {
    await first.stop();
  }

  const second = await startTronTestChain({ dataDir });
  try {
    const user = second.tronWeb('user');
    assert.deepEqual(second.deployment, first.deployment);
    assert.equal(await second.localnet.chain.anvil.rpc('eth_getTransactionCount', [devAccount('deployer').address, 'latest']), '0x4', 'nothing redeployed: the two contracts and two mints of the first start');
    assert.ok((await second.localnet.chain.headNumber()) >= head);
    assert.equal(await user.trx.getBalance(tronAddressOf('user')), balance);
    const info = (await user.trx.getTransactionInfo(signed.txID)) as unknown as { id: string; blockNumber: number; receipt: { result: string }; log: unknown[] };
    assert.deepEqual([info.id, info.blockNumber, info.receipt.result, info.log.length], [signed.txID, head - 2, 'SUCCESS', 1]);
    const block = (await user.trx.getBlockByNumber(info.blockNumber)) as unknown as { transactions?: Array<{ txID: string }> };
    assert.deepEqual(block.transactions?.map((t) => t.txID), [signed.txID]);
    const again = (await user.trx.sendRawTransaction(signed as never)) as { code?: string };
    assert.equal(again.code, 'DUP_TRANSACTION_ERROR');
  } finally {
    await second.stop();
  }
});
