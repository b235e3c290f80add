import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toDisplay, toUsd } from '../../src/pricing/amounts.ts';

test('display shows every decimal of the asset', () => {
  const cases: Array<[bigint, number, string]> = [
    [50000n, 8, '0.00050000'],
    [0n, 8, '0.00000000'],
    [123456789n, 8, '1.23456789'],
    [1n, 18, '0.000000000000000001'],
    [10n ** 30n, 18, '1000000000000.000000000000000000'],
    [42n, 0, '42'],
    [-5n, 2, '-0.05'],
  ];
  for (const [amount, decimals, expected] of cases) assert.equal(toDisplay(amount, decimals), expected);
});

test('USD values round half up to cents without losing precision on large amounts', () => {
  const cases: Array<[bigint, number, number, string]> = [
    [100000n, 8, 95000, '95.00'],
    [99700n, 8, 95000, '94.72'], // 94.715 rounds up
    [28500n, 6, 1, '0.03'], // 0.0285
    [2n ** 200n, 18, 3200, '5142201741628768881734278695491720328071049580.10'],
    [1n, 8, 0, '0.00'],
    [1000n, 8, Number.NaN, '0.00'],
    [1n, 6, 1, '0.00'],
    [5000n, 6, 1, '0.01'],
  ];
  for (const [amount, decimals, price, expected] of cases) assert.equal(toUsd(amount, decimals, price), expected, `${amount}@${price}`);
});
