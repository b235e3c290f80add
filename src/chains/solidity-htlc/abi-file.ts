import { readFileSync } from 'node:fs';

/** A contract's ABI from its JSON file (written from the Solidity source by scripts/write-abis.ts). */
export const abiFile = (url: URL): readonly object[] => JSON.parse(readFileSync(url, 'utf8')) as object[];
