import { sha256 } from '@noble/hashes/sha2.js';
import { hex } from '@scure/base';
import { Script } from '@scure/btc-signer';
import { equalBytes } from '@scure/btc-signer/utils.js';

/** What a spend of an HTLC output did, read from its witness. */
export type HtlcSpend = { kind: 'redeem'; secret: string } | { kind: 'refund' } | { kind: 'instantRefund' };

/** A control block's first byte: leaf version 0xc0 (tapscript) with either parity bit. */
const LEAF_VERSION_BYTES = ['c0', 'c1'];
const ANNEX_TAG = '50';

/** A decoded script item: an opcode name, a small number (OP_1..OP_16) or pushed bytes. */
type Op = string | number | Uint8Array;
const isBytes = (op: Op | undefined, length: number): op is Uint8Array => op instanceof Uint8Array && op.length === length;
const is = (op: Op | undefined, name: string | number): boolean => op === name;

/**
 * Which HTLC leaf a script-path spend used (DESIGN.md section 3), from the witness items as hex:
 * the leaf script is the second-to-last item and the control block the last (after dropping a
 * BIP-341 annex). Matching the leaf's template is enough: the node accepted the spend, so the
 * control block proves the leaf is in the output's tree, and the output is the order's HTLC, whose
 * tree holds exactly these three leaves. The HTLC's key path is unspendable, so every spend shows
 * a leaf. Undefined for anything else (a wallet's key-path spend, another script).
 */
export function htlcSpendOf(witnessHex: readonly string[]): HtlcSpend | undefined {
  // Cheap checks on the hex first: a block's inputs are mostly key-path and segwit v0 spends.
  let end = witnessHex.length;
  if (end >= 2 && witnessHex[end - 1]!.slice(0, 2) === ANNEX_TAG) end--;
  if (end < 3) return undefined;
  const controlBlock = witnessHex[end - 1]!.toLowerCase();
  if (controlBlock.length < 66 || !LEAF_VERSION_BYTES.includes(controlBlock.slice(0, 2))) return undefined;
  let items: Uint8Array[];
  try {
    items = witnessHex.slice(0, end - 1).map((item) => hex.decode(item.toLowerCase()));
  } catch {
    return undefined;
  }
  let leaf: Op[];
  try {
    leaf = Script.decode(items.at(-1)!);
  } catch {
    return undefined;
  }
  const args = items.slice(0, -1);

  // redeem: OP_SHA256 <secret_hash> OP_EQUALVERIFY <redeemer> OP_CHECKSIG; witness [sig, secret, leaf, cb]
  if (leaf.length === 5 && is(leaf[0], 'SHA256') && isBytes(leaf[1], 32) && is(leaf[2], 'EQUALVERIFY') && isBytes(leaf[3], 32) && is(leaf[4], 'CHECKSIG')) {
    const secret = args[1];
    if (args.length !== 2 || !secret || !equalBytes(sha256(secret), leaf[1])) return undefined;
    return { kind: 'redeem', secret: hex.encode(secret) };
  }
  // refund: <timelock> OP_CHECKSEQUENCEVERIFY OP_DROP <initiator> OP_CHECKSIG; witness [sig, leaf, cb]
  if (leaf.length === 5 && is(leaf[1], 'CHECKSEQUENCEVERIFY') && is(leaf[2], 'DROP') && isBytes(leaf[3], 32) && is(leaf[4], 'CHECKSIG')) {
    return args.length === 1 ? { kind: 'refund' } : undefined;
  }
  // instant refund: <initiator> OP_CHECKSIG <redeemer> OP_CHECKSIGADD OP_2 OP_NUMEQUAL; witness [redeemer sig, initiator sig, leaf, cb]
  if (
    leaf.length === 6 &&
    isBytes(leaf[0], 32) &&
    is(leaf[1], 'CHECKSIG') &&
    isBytes(leaf[2], 32) &&
    is(leaf[3], 'CHECKSIGADD') &&
    is(leaf[4], 2) &&
    is(leaf[5], 'NUMEQUAL')
  ) {
    return args.length === 2 ? { kind: 'instantRefund' } : undefined;
  }
  return undefined;
}
