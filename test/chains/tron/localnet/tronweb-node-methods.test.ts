// What a Tron integrator calls first with an unmodified TronWeb (6.5.1), against the local Tron chain:
// `contract().at(usdt)` and a TRC-20 read through it, the energy estimate of a transfer, the chain
// parameters (the energy price), the account's resources, the energy price history and the node's info.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEFAULT_ENERGY_PRICE_SUN } from '../../../../src/localnet/tron/chain.ts';
import { startTronTestChain, tronAddressOf, type TronTestChain } from '../../../helpers/tron-localnet.ts';

let c: TronTestChain;

before(async () => {
  c = await startTronTestChain();
});
after(() => c?.stop());

test('contract().at(usdt): the TRC-20 by its ABI from getcontract, balanceOf read through it', async () => {
  const tw = c.tronWeb('user');
  const usdt = await tw.contract().at(c.deployment.usdt);
  const balance = (await usdt.methods.balanceOf!(tronAddressOf('user')).call()) as bigint;
  const direct = await tw.transactionBuilder.triggerConstantContract(c.deployment.usdt, 'balanceOf(address)', {}, [{ type: 'address', value: tronAddressOf('user') }], tronAddressOf('user'));
  assert.equal(BigInt(balance.toString()), BigInt(`0x${direct.constant_result[0]}`));
  assert.ok(BigInt(balance.toString()) > 0n, 'the dev user holds test USDT');
  const decimals = (await usdt.methods.decimals!().call()) as bigint;
  assert.equal(Number(decimals), 6);
});

test('transactionBuilder.estimateEnergy of a transfer, and of a transfer that reverts', async () => {
  const tw = c.tronWeb('user');
  const params = [{ type: 'address', value: tronAddressOf('solver') }, { type: 'uint256', value: 1_000 }];
  const estimate = await tw.transactionBuilder.estimateEnergy(c.deployment.usdt, 'transfer(address,uint256)', {}, params, tronAddressOf('user'));
  assert.equal(estimate.result.result, true);
  assert.ok(estimate.energy_required > 20_000 && estimate.energy_required < 200_000, String(estimate.energy_required));
  const tooMuch = [{ type: 'address', value: tronAddressOf('solver') }, { type: 'uint256', value: (10n ** 30n).toString() }];
  await assert.rejects(tw.transactionBuilder.estimateEnergy(c.deployment.usdt, 'transfer(address,uint256)', {}, tooMuch, tronAddressOf('user')));
});

test('getChainParameters, getEnergyPrices, getAccountResources and getNodeInfo', async () => {
  const tw = c.tronWeb('user');
  const parameters = await tw.trx.getChainParameters();
  assert.equal(parameters.find((p) => p.key === 'getEnergyFee')?.value, Number(DEFAULT_ENERGY_PRICE_SUN));
  assert.equal(await tw.trx.getEnergyPrices(), `0:${DEFAULT_ENERGY_PRICE_SUN}`);
  const resources = await tw.trx.getAccountResources(tronAddressOf('user'));
  assert.equal(resources.freeNetLimit, 600);
  const info = (await tw.trx.getNodeInfo()) as unknown as { block: string; solidityBlock: string };
  assert.match(info.block, /^Num:\d+,ID:[0-9a-f]{64}$/);
  assert.match(info.solidityBlock, /^Num:\d+,ID:/);
});
