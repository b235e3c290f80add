import assert from 'node:assert/strict';
import { test } from 'node:test';
import { address, getAddressEncoder } from '@solana/kit';
import { decodeSwapEvents } from '../../../../src/chains/solana/events.ts';
import { anchorEventDiscriminator } from '../../../../src/chains/solana/program.ts';
import { filledAddress } from '../fixtures.ts';

const HTLC = address(filledAddress(9));
const OTHER = address(filledAddress(8));
const INITIATOR = address(filledAddress(1));
const refunded = (hashByte: number): string =>
  Buffer.from([...anchorEventDiscriminator('Refunded'), ...getAddressEncoder().encode(INITIATOR), ...new Uint8Array(32).fill(hashByte)]).toString('base64');

test('only the HTLC program\'s own "Program data" lines are its events, at any depth', () => {
  const logs = [
    `Program ${OTHER} invoke [1]`,
    `Program data: ${refunded(1)}`, // another program logging bytes that look like an event
    `Program ${HTLC} invoke [2]`,
    'Program log: Instruction: Refund',
    `Program ${OTHER} invoke [3]`,
    `Program data: ${refunded(2)}`,
    `Program ${OTHER} consumed 100 of 1000 compute units`,
    `Program ${OTHER} success`,
    `Program data: ${refunded(3)}`,
    `Program data: ${refunded(4)} ${refunded(5)}`, // two fields: not Anchor's emit!
    `Program ${HTLC} consumed 100 of 1000 compute units`,
    `Program ${HTLC} success`,
    `Program data: ${refunded(6)}`,
    `Program ${OTHER} success`,
  ];
  assert.deepEqual(decodeSwapEvents('native', HTLC, logs), [{ name: 'Refunded', initiator: INITIATOR, secretHash: new Uint8Array(32).fill(3) }]);
});
