import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeErrorResult } from 'viem';
import { revertReason } from '../../../src/chains/tron/chain-errors.ts';
import { htlcAbi } from '../../../src/chains/solidity-htlc/htlc-abi.ts';

test("a revert's custom error is named, with its arguments ABI-encoded or only its selector in the node's message", () => {
  const encoded = encodeErrorResult({ abi: htlcAbi, errorName: 'ERC20InsufficientAllowance', args: ['0x1111111111111111111111111111111111111111', 1n, 2n] });
  assert.equal(revertReason(`REVERT opcode executed: ${encoded}`), 'reverted: ERC20InsufficientAllowance');
  // As the local chain words it: the selector, then the arguments after a colon.
  assert.equal(revertReason(`CONTRACT_EXE_ERROR: execution reverted: custom error ${encoded.slice(0, 10)}: ${encoded.slice(10, 40)}…`), 'reverted: ERC20InsufficientAllowance');
  assert.equal(revertReason('CONTRACT_EXE_ERROR: custom error 0xdeadbeef: 00'), 'CONTRACT_EXE_ERROR: custom error 0xdeadbeef: 00', 'not one of ours: the message');
});
