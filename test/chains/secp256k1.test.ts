// libsecp256k1 (native) must answer exactly as viem's JS curve does: the same signature byte for byte,
// the same signer recovered, and a refusal where viem refuses.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { bytesToHex, numberToHex, recoverAddress, type Hex } from 'viem';
import { privateKeyToAddress, sign } from 'viem/accounts';
import { nativeSecp256k1, recoverDigestAddress, signDigest } from '../../src/chains/secp256k1.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const random32 = (): Hex => bytesToHex(randomBytes(32));

/** viem's answer, or the fact that it refused. */
const settle = <T>(p: Promise<T>): Promise<T | 'refused'> => p.catch(() => 'refused' as const);

test('the native binding is what runs on Linux x64', () => {
  if (process.platform === 'linux' && process.arch === 'x64') assert.equal(nativeSecp256k1, true, 'secp256k1/bindings did not load: signing falls back to pure JS');
});

test('a digest signed natively is the signature viem makes (RFC 6979, low s)', async () => {
  for (let i = 0; i < 50; i++) {
    const privateKey = random32();
    const hash = random32();
    const ours = await signDigest(hash, privateKey);
    const viems = await sign({ hash, privateKey });
    assert.deepEqual(ours, { r: viems.r, s: viems.s, yParity: viems.yParity }, `signature ${i} differs`);
    assert.ok(BigInt(ours.s) <= N / 2n, 'a low s');
  }
});

test('recovery names the signer viem names, for v as 27/28 and as 0/1, and for a high s', async () => {
  for (let i = 0; i < 30; i++) {
    const privateKey = random32();
    const hash = random32();
    const { r, s, yParity = 0 } = await sign({ hash, privateKey });
    const signer = privateKeyToAddress(privateKey);
    const rs = `${r}${s.slice(2)}`;
    for (const v of [27 + yParity, yParity]) {
      const signature = `${rs}${numberToHex(v, { size: 1 }).slice(2)}` as Hex;
      assert.equal(await recoverDigestAddress(hash, signature), signer, `v = ${v}`);
    }
    // The same point with s -> n - s and the other parity: viem recovers it, so do we (the HTLC decides on-chain).
    const highS = `${r}${numberToHex(N - BigInt(s), { size: 32 }).slice(2)}${numberToHex(28 - yParity, { size: 1 }).slice(2)}` as Hex;
    assert.equal(await settle(recoverDigestAddress(hash, highS)), await settle(recoverAddress({ hash, signature: highS })), 'high s');
  }
});

test('garbage recovers what viem recovers, or is refused where viem refuses', async () => {
  const cases: Hex[] = [
    `0x${'00'.repeat(64)}1b`,
    `0x${'ff'.repeat(64)}1c`,
    `0x${'00'.repeat(32)}${'11'.repeat(32)}1b`,
    ...Array.from({ length: 40 }, () => `${random32()}${random32().slice(2)}${['1b', '1c', '00', '01'][Math.floor(Math.random() * 4)]}` as Hex),
  ];
  for (const signature of cases) {
    const hash = random32();
    assert.equal(await settle(recoverDigestAddress(hash, signature)), await settle(recoverAddress({ hash, signature })), signature);
  }
});
