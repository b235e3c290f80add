import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base58 } from '@scure/base';
import { solanaHtlc } from '../../../src/chains/solana/index.ts';
import { mainnetAsset, SOLANA } from './fixtures.ts';

const SOL_PROGRAM = '2bag6xpshpvPe7SJ9nSDLHpxqhEAoHPGpEkjNSv7gxoF';
const bytes = (n: number, fill = 9): string => base58.encode(new Uint8Array(n).fill(fill));

const cases: Array<[string, string, string | undefined]> = [
  ['the native HTLC program', SOL_PROGRAM, SOL_PROGRAM],
  ['the USDC mint', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'],
  ['the system program (32 zero bytes)', '11111111111111111111111111111111', '11111111111111111111111111111111'],
  ['32 bytes of 0xff (44 characters)', bytes(32, 0xff), bytes(32, 0xff)],
  ['31 bytes', bytes(31), undefined],
  ['33 bytes', bytes(33), undefined],
  ['an extra leading 1 (a 33rd, zero byte)', `1${SOL_PROGRAM}`, undefined],
  ['the characters 0, O, I and l', '0OIl' + SOL_PROGRAM.slice(4), undefined],
  ['an EVM address', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', undefined],
  ['64 hex characters', 'ab'.repeat(32), undefined],
  ['surrounding whitespace', ` ${SOL_PROGRAM} `, undefined],
  ['a short string', 'abc', undefined],
  ['an empty string', '', undefined],
];

for (const [name, input, expected] of cases) {
  test(`normalizeAddress: ${name} → ${expected ?? 'undefined'}`, () => {
    assert.equal(solanaHtlc.normalizeAddress(SOLANA, input), expected);
  });
}

test('normalizeAddress refuses a Solana address on a chain of another family', () => {
  const ethereum = mainnetAsset('ethereum:wbtc').chain;
  assert.equal(solanaHtlc.normalizeAddress(ethereum, SOL_PROGRAM), undefined);
});
