import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToNumberBE } from '@noble/curves/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { hex } from '@scure/base';
import { p2tr, Script, TaprootControlBlock, taprootNumsKey } from '@scure/btc-signer';
import { equalBytes } from '@scure/btc-signer/utils.js';
import { isXOnlyPublicKey } from './address.ts';
import { bitcoinNetwork } from './network.ts';

/** What fixes a bitcoin-family HTLC: the parties' x-only keys, sha256(secret) and a relative timelock. */
export interface HtlcScriptTerms {
  /** x-only public key (64 hex) that funds the HTLC and can refund it. */
  initiator: string;
  /** x-only public key (64 hex) that can redeem with the secret. */
  redeemer: string;
  /** sha256(secret), 64 hex. */
  secretHash: string;
  /** Relative timelock in blocks (BIP-68/112 CSV), 1..65535. */
  timelock: bigint;
}

export interface HtlcLeaves {
  redeem: Uint8Array;
  refund: Uint8Array;
  instantRefund: Uint8Array;
}

/** What a script-path witness needs besides the signatures (and secret): the leaf and its control block. */
export interface HtlcLeafSpend {
  script: Uint8Array;
  controlBlock: Uint8Array;
}

/**
 * The taproot internal key, H + sha256("GardenHTLC")·G as Garden derives it, where H is the BIP-341
 * NUMS point: lift_x(sha256(uncompressed G)), which is btc-signer's taprootNumsKey(). Nobody knows
 * its discrete logarithm, so the key path is unspendable and only the script leaves can move funds.
 */
const INTERNAL_KEY: Uint8Array = (() => {
  const { Point, utils } = schnorr;
  const h = utils.lift_x(bytesToNumberBE(taprootNumsKey()));
  const r = bytesToNumberBE(sha256(utf8ToBytes('GardenHTLC')));
  return utils.pointToBytes(h.add(Point.BASE.multiply(r)));
})();

/** The HTLC's x-only internal key as hex. */
export const HTLC_INTERNAL_KEY_HEX: string = hex.encode(INTERNAL_KEY);

/** Largest block-based CSV value: BIP-68 keeps 16 bits for it; higher bits change the lock's meaning. */
const MAX_TIMELOCK = 0xffffn;
const HASH_HEX = /^[0-9a-fA-F]{64}$/;

function checkTerms(terms: HtlcScriptTerms): { initiator: Uint8Array; redeemer: Uint8Array; secretHash: Uint8Array; timelock: number } {
  for (const party of ['initiator', 'redeemer'] as const) {
    if (!isXOnlyPublicKey(terms[party])) {
      throw new Error(`HTLC ${party}: must be an x-only public key (64 hex digits, a point on secp256k1)`);
    }
  }
  if (typeof terms.secretHash !== 'string' || !HASH_HEX.test(terms.secretHash)) {
    throw new Error('HTLC secretHash: must be 64 hex digits (sha256 of the secret)');
  }
  if (typeof terms.timelock !== 'bigint' || terms.timelock < 1n || terms.timelock > MAX_TIMELOCK) {
    throw new Error(`HTLC timelock: must be a whole number of blocks from 1 to ${MAX_TIMELOCK}`);
  }
  return {
    initiator: hex.decode(terms.initiator.toLowerCase()),
    redeemer: hex.decode(terms.redeemer.toLowerCase()),
    secretHash: hex.decode(terms.secretHash.toLowerCase()),
    timelock: Number(terms.timelock),
  };
}

/** The three tapscript leaves of the HTLC (DESIGN.md section 3). Throws on invalid terms. */
export function htlcLeaves(terms: HtlcScriptTerms): HtlcLeaves {
  const t = checkTerms(terms);
  return {
    redeem: Script.encode(['SHA256', t.secretHash, 'EQUALVERIFY', t.redeemer, 'CHECKSIG']),
    // Script.encode writes numbers minimally (OP_1..OP_16, else a minimal script number push).
    refund: Script.encode([t.timelock, 'CHECKSEQUENCEVERIFY', 'DROP', t.initiator, 'CHECKSIG']),
    instantRefund: Script.encode([t.initiator, 'CHECKSIG', t.redeemer, 'CHECKSIGADD', 2, 'NUMEQUAL']),
  };
}

/**
 * The HTLC's taproot output on a bitcoin-family network (by name): btc-signer's p2tr result (address,
 * output script, tweaked key, merkle root, `tapLeafScript` for PSBT inputs) plus, per leaf, the
 * script and control block a script-path spend puts in its witness. Throws on invalid terms or an
 * unknown network.
 */
export function htlcPayment(terms: HtlcScriptTerms, network: string) {
  const leaves = htlcLeaves(terms);
  const tree = [{ script: leaves.redeem }, [{ script: leaves.refund }, { script: leaves.instantRefund }]];
  // allowUnknownOutputs: btc-signer only knows its own leaf templates, not these HTLC scripts.
  const payment = p2tr(INTERNAL_KEY, tree, bitcoinNetwork(network), true);
  const tapLeafScript = payment.tapLeafScript ?? [];
  const spend = (script: Uint8Array): HtlcLeafSpend => {
    // Each entry is [control block, script || leaf version].
    const entry = tapLeafScript.find(([, leaf]) => equalBytes(leaf.subarray(0, -1), script));
    if (!entry) throw new Error('HTLC leaf missing from its taproot tree');
    return { script, controlBlock: TaprootControlBlock.encode(entry[0]) };
  };
  return {
    ...payment,
    tapLeafScript,
    spends: { redeem: spend(leaves.redeem), refund: spend(leaves.refund), instantRefund: spend(leaves.instantRefund) },
  };
}

export type HtlcPayment = ReturnType<typeof htlcPayment>;

/** The HTLC's P2TR address (bech32m) on a bitcoin-family network (by name). */
export function htlcAddress(terms: HtlcScriptTerms, network: string): string {
  return htlcPayment(terms, network).address;
}
