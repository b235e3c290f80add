import { isHex, recoverMessageAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** Whether `signature` is `address`'s EIP-191 signature (personal_sign, as every EVM wallet makes) of `message`. */
export async function verifyEvmAddressProof(address: string, message: string, signature: string): Promise<boolean> {
  if (!isHex(signature) || signature.length !== 132) return false;
  try {
    return (await recoverMessageAddress({ message, signature })).toLowerCase() === address.toLowerCase();
  } catch {
    return false;
  }
}

/** `verifyEvmAddressProof`'s proof: the key's account signs `message` (EIP-191). */
export const signEvmAddressProof = (privateKey: Hex, message: string): Promise<string> => privateKeyToAccount(privateKey).signMessage({ message });
