/**
 * The HTLC and NativeHTLC ABIs as the service uses them (contracts/*.sol): the client's initiate
 * calldata, the relayer's and solver's calls, and the errors to report reverts by name.
 * Written out rather than read from the solc artifacts so that viem types every call, and so that the
 * API does not compile Solidity at start. The custom errors let reverts be reported by name.
 */

const bytes32 = (name: string) => ({ name, type: 'bytes32' }) as const;

const errors = [
  'ZeroAddressRedeemer',
  'ZeroAddressInitiator',
  'ZeroTimelock',
  'ZeroAmount',
  'SameInitiatorAndRedeemer',
  'SameFunderAndRedeemer',
  'DuplicateOrder',
  'InvalidInitiatorSignature',
  'InvalidSecretLength',
  'OrderNotInitiated',
  'OrderFulfilled',
  'IncorrectSecret',
  'OrderNotExpired',
  'InvalidRedeemerSignature',
  'IncorrectFundsReceived',
] as const;

/** The self-broadcast initiate; selector 0x97ffc7ae, as Garden's deployed contracts. */
export const htlcInitiateAbi = [
  {
    type: 'function',
    name: 'initiate',
    stateMutability: 'payable',
    inputs: [
      { name: 'redeemer', type: 'address' },
      { name: 'timelock', type: 'uint256' },
      { name: 'amount', type: 'uint256' },
      bytes32('secretHash'),
    ],
    outputs: [],
  },
] as const;

export const htlcAbi = [
  ...htlcInitiateAbi,
  {
    type: 'function',
    name: 'initiateWithSignature',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'initiator', type: 'address' },
      { name: 'redeemer', type: 'address' },
      { name: 'timelock', type: 'uint256' },
      { name: 'amount', type: 'uint256' },
      bytes32('secretHash'),
      { name: 'signature', type: 'bytes' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'redeem',
    stateMutability: 'nonpayable',
    inputs: [bytes32('orderID'), { name: 'secret', type: 'bytes' }],
    outputs: [],
  },
  { type: 'function', name: 'refund', stateMutability: 'nonpayable', inputs: [bytes32('orderID')], outputs: [] },
  {
    type: 'function',
    name: 'instantRefund',
    stateMutability: 'nonpayable',
    inputs: [bytes32('orderID'), { name: 'signature', type: 'bytes' }],
    outputs: [],
  },
  {
    type: 'function',
    name: 'orders',
    stateMutability: 'view',
    inputs: [bytes32('orderID')],
    outputs: [
      { name: 'initiator', type: 'address' },
      { name: 'redeemer', type: 'address' },
      { name: 'initiatedAt', type: 'uint256' },
      { name: 'timelock', type: 'uint256' },
      { name: 'amount', type: 'uint256' },
      { name: 'fulfilledAt', type: 'uint256' },
    ],
  },
  ...errors.flatMap((e) => [
    { type: 'error', name: `HTLC__${e}`, inputs: [] } as const,
    { type: 'error', name: `NativeHTLC__${e}`, inputs: [] } as const,
  ]),
  // OpenZeppelin ERC-20 errors, the usual reason a gasless initiate cannot pull the tokens.
  {
    type: 'error',
    name: 'ERC20InsufficientAllowance',
    inputs: [
      { name: 'spender', type: 'address' },
      { name: 'allowance', type: 'uint256' },
      { name: 'needed', type: 'uint256' },
    ],
  },
  {
    type: 'error',
    name: 'ERC20InsufficientBalance',
    inputs: [
      { name: 'sender', type: 'address' },
      { name: 'balance', type: 'uint256' },
      { name: 'needed', type: 'uint256' },
    ],
  },
] as const;
