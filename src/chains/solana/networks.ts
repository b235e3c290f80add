/**
 * Which Solana network a node serves, told by its genesis hash (getGenesisHash): the public clusters'
 * are fixed; any other is a local (or private) chain, whose hash is its own and changes when it
 * starts afresh. The registry's `network` (mainnet, devnet, testnet, localnet) names the one expected;
 * its `solana:<n>` id is Garden's numbering and says nothing a node can confirm.
 */
export const PUBLIC_CLUSTER_GENESIS_HASHES: Readonly<Record<'mainnet' | 'devnet' | 'testnet', string>> = {
  mainnet: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  devnet: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
  testnet: '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY',
};

/** The registry network a genesis hash belongs to: a public cluster's name, else `localnet`. */
export function networkOfGenesis(genesisHash: string): string {
  const entry = Object.entries(PUBLIC_CLUSTER_GENESIS_HASHES).find(([, hash]) => hash === genesisHash);
  return entry ? entry[0] : 'localnet';
}

/** How a network is named in messages: `solana devnet (genesis EtWT…)`. */
export function describeNetwork(network: string, genesisHash?: string): string {
  const genesis = genesisHash ?? (PUBLIC_CLUSTER_GENESIS_HASHES as Record<string, string>)[network];
  return `solana ${network} (${genesis ? `genesis ${genesis}` : "a genesis of its own, none of the public clusters'"})`;
}
