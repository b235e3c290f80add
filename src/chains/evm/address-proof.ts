import { isHex, recoverMessageAddress } from 'viem';

/** Whether `signature` is `address`'s EIP-191 signature (personal_sign, as every EVM wallet makes) of `message`. */
export async function verifyEvmAddressProof(address: string, message: string, signature: string): Promise<boolean> {
  if (!isHex(signature) || signature.length !== 132) return false;
  try {
    return (await recoverMessageAddress({ message, signature })).toLowerCase() === address.toLowerCase();
  } catch {
    return false;
  }
}
